// A compact line chart over time, hand-drawn in SVG (no library): one colour per series (stage,
// queue or model), the mean per bucket and the maximum in two panels side by side (each on its own
// scale: a mean of microseconds would lie flat under a maximum of seconds), a legend, value axes in
// the column's unit (µs read as µs, ms, s) and a time axis in the zone the reader chose. Every point carries its figures as a tooltip, and the same figures are one tap away as a
// table under the chart, for a phone and for a screen reader.
import { formatClock, formatDate, formatMeasure, formatNumber, h, s, zoneName } from './dom.js';

/** @typedef {import('./api-types.js').Series} Series */
/** @typedef {import('./api-types.js').SeriesPoint} SeriesPoint */
/** @typedef {import('./api-types.js').SeriesAnswer} SeriesAnswer */
/** @typedef {import('../../src/reads/grid-page').ChartMeasure} ChartMeasure */

const HEIGHT = 150;
const MARGIN = { top: 8, right: 10, bottom: 22, left: 58 };
/** Colours in CSS (app.css .series-N); more series than colours repeat them with the legend to tell. */
const COLOURS = 8;

/** The smallest 1, 2 or 5 × 10ⁿ step that splits `span` into at most `count` parts. @param {number} span @param {number} count */
export function niceStep(span, count) {
  if (!(span > 0)) return 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

const MINUTE = 60_000;
const TIME_STEPS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440, 2880, 10080].map((m) => m * MINUTE);

/**
 * Value of a point for the line: mean (or the contract's meanMicroseconds for the stage counters) and max.
 * @param {SeriesPoint} point @param {string} key
 */
function pointValue(point, key) {
  const n = Number(point?.[key]);
  return Number.isFinite(n) ? n : null;
}

/** Points further apart than this many buckets are not joined: a long stretch without rows is no trend. */
const JOIN_BUCKETS = 5;
/** Below this width the panels stack; above it they sit side by side. */
const SIDE_BY_SIDE = 760;
const GAP = 16;

/**
 * One panel: the lines of one point field (the mean, or the max) of every series, on a value axis of
 * its own, so a mean of microseconds is not flattened under a maximum of seconds.
 * @param {Series[]} series @param {string} key @param {string} title @param {ChartMeasure} measure
 * @param {{ from: number, to: number, bucketMs: number, width: number }} frame
 */
function panel(series, key, title, measure, { from, to, bucketMs, width }) {
  const w = Math.max(260, Math.floor(width));
  const plotW = w - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  let top = 0;
  for (const x of series) for (const p of x.points) top = Math.max(top, pointValue(p, key) ?? 0);
  // Counts step by whole numbers: no "0.5 events".
  const step = measure.whole ? Math.max(1, niceStep(top || 1, 3)) : niceStep(top || 1, 3);
  const yMax = Math.max(step, Math.ceil((top || 1) / step) * step);
  /** @param {number} ms */
  const xOf = (ms) => MARGIN.left + ((ms - from) / (to - from)) * plotW;
  /** @param {number} v */
  const yOf = (v) => MARGIN.top + plotH - (v / yMax) * plotH;
  // A point sits in the middle of its bucket.
  /** @param {SeriesPoint} point */
  const mid = (point) => new Date(point.at).getTime() + (bucketMs > 0 ? bucketMs / 2 : 0);

  const grid = [];
  for (let v = 0; v <= yMax + step / 2; v += step) {
    const y = yOf(v);
    grid.push(s('line', { class: 'chart-grid', x1: MARGIN.left, x2: w - MARGIN.right, y1: y, y2: y }));
    grid.push(s('text', { class: 'chart-tick', x: MARGIN.left - 6, y: y + 4, 'text-anchor': 'end' }, formatMeasure(v, measure.unit, { resolution: step }).text));
  }
  const timeStep = TIME_STEPS.find((t) => (to - from) / t <= Math.max(2, Math.floor(plotW / 80))) ?? TIME_STEPS[TIME_STEPS.length - 1];
  const spansDays = to - from > 20 * 3_600_000;
  for (let t = Math.ceil(from / timeStep) * timeStep; t <= to; t += timeStep) {
    const x = xOf(t);
    grid.push(s('line', { class: 'chart-grid chart-grid-x', x1: x, x2: x, y1: MARGIN.top, y2: MARGIN.top + plotH }));
    grid.push(s('text', { class: 'chart-tick', x, y: HEIGHT - 6, 'text-anchor': 'middle' }, formatClock(t, { day: spansDays })));
  }

  /** @type {SVGPathElement[]} */
  const paths = [];
  /** @type {SVGCircleElement[]} */
  const dots = [];
  series.forEach((x, i) => {
    const colour = `series-${i % COLOURS}`;
    let d = '';
    /** @type {number | null} */
    let previous = null;
    for (const p of x.points) {
      const v = pointValue(p, key);
      if (v === null) continue;
      const at = mid(p);
      const jump = previous === null || (bucketMs > 0 && at - previous > bucketMs * JOIN_BUCKETS);
      d += `${jump ? 'M' : 'L'}${xOf(at).toFixed(1)},${yOf(v).toFixed(1)}`;
      previous = at;
      dots.push(s('circle', { class: ['chart-dot', colour], cx: xOf(at).toFixed(1), cy: yOf(v).toFixed(1), r: 2.4 }, s('title', {}, pointText(x, p, measure))));
    }
    if (d) paths.push(s('path', { class: ['chart-line', colour], d, 'data-series': x.key, 'data-line': key }));
  });

  return h(
    'div',
    { class: 'chart-panel', 'data-line': key },
    h('div', { class: 'chart-panel-title' }, title),
    s(
      'svg',
      { class: 'chart', viewBox: `0 0 ${w} ${HEIGHT}`, width: w, height: HEIGHT, role: 'img', 'aria-label': `${title} over time, ${series.length} ${series.length === 1 ? 'line' : 'lines'}` },
      grid,
      paths,
      dots,
    ),
  );
}

/**
 * The chart of a Series answer (contract 17). `measure`: { label, unit, mean, max, meanLabel,
 * maxLabel } where mean and max name the point fields drawn, each in a panel of its own (for a
 * count-only table, mean is 'count' and max is null: one panel).
 * @param {SeriesAnswer | null | undefined} answer
 * @param {ChartMeasure} measure
 * @param {{ width?: number, testid?: string, bucketLabel?: string }} [options]
 */
export function seriesChart(answer, measure, { width = 640, testid = 'series-chart', bucketLabel } = {}) {
  const series = answer && Array.isArray(answer.series) ? answer.series.filter((x) => Array.isArray(x.points) && x.points.length > 0) : [];
  const from = new Date(answer?.from ?? Number.NaN).getTime();
  const to = new Date(answer?.to ?? Number.NaN).getTime();
  const bucketMs = Number(answer?.bucketSeconds) * 1000;
  if (series.length === 0 || !Number.isFinite(from) || !Number.isFinite(to) || !(to > from)) {
    return h('p', { class: 'stat-state chart-empty', 'data-testid': testid, 'data-state': 'no-data' }, 'No rows in this window, so there is nothing to draw over time.');
  }
  const lines = /** @type {[string, string][]} */ ([
    measure.mean ? [measure.mean, capitalise(measure.meanLabel ?? 'mean')] : null,
    measure.max && measure.max !== measure.mean ? [measure.max, capitalise(measure.maxLabel ?? 'max')] : null,
  ].filter(Boolean));
  const sideBySide = lines.length > 1 && width >= SIDE_BY_SIDE;
  const panelWidth = sideBySide ? (width - GAP) / 2 : width;

  const legend = h(
    'ul',
    { class: 'chart-legend', 'data-testid': `${testid}-legend` },
    series.map((x, i) => h('li', { 'data-series': x.key }, h('span', { class: ['swatch', `series-${i % COLOURS}`], 'aria-hidden': 'true' }), seriesName(x))),
  );
  const caption = `${bucketLabel ?? `Per ${formatBucket(Number(answer?.bucketSeconds))}`}, times in ${zoneName(from)}.`;
  return h(
    'figure',
    { class: 'chart-figure', 'data-testid': testid, 'data-state': 'drawn', 'data-series-count': String(series.length) },
    h('div', { class: ['chart-panels', sideBySide ? 'side-by-side' : null] }, lines.map(([key, title]) => panel(series, key, title, measure, { from, to, bucketMs, width: panelWidth }))),
    h('figcaption', { class: 'chart-caption' }, legend, h('span', { class: 'muted small' }, caption)),
    valuesTable(series, measure),
  );
}

/** @param {string} text */
const capitalise = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** @param {Series} x */
function seriesName(x) {
  if (x.key === 'all') return x.name ?? 'All rows';
  if (x.key === 'other') return 'Others';
  return x.name ?? String(x.key);
}

/** "20 min", "1 h", "1 day". @param {number} seconds */
export function formatBucket(seconds) {
  const n = Number(seconds);
  if (n % 86_400 === 0) return n === 86_400 ? 'day' : `${n / 86_400} days`;
  if (n % 3_600 === 0) return n === 3_600 ? 'hour' : `${n / 3_600} h`;
  if (n % 60 === 0) return n === 60 ? 'minute' : `${n / 60} min`;
  return `${n} s`;
}

/** @param {Series} x @param {SeriesPoint} p @param {ChartMeasure} measure */
function pointText(x, p, measure) {
  const parts = [`${seriesName(x)} · ${formatDate(p.at)}`];
  if (measure.mean) parts.push(`${measure.meanLabel ?? 'mean'} ${formatMeasure(p[measure.mean], measure.unit).text}`);
  if (measure.max && measure.max !== measure.mean) parts.push(`${measure.maxLabel ?? 'max'} ${formatMeasure(p[measure.max], measure.unit).text}`);
  parts.push(`${formatNumber(p.count)} ${Number(p.count) === 1 ? 'row' : 'rows'}`);
  return parts.join(' · ');
}

/** The most rows the values table lists (120 buckets × 20 series would be 2,400). */
const VALUES_SHOWN = 240;

/** The figures behind the lines, newest first, behind a disclosure. @param {Series[]} series @param {ChartMeasure} measure */
function valuesTable(series, measure) {
  const all = series.flatMap((x) => x.points.map((p) => ({ x, p }))).sort((a, b) => new Date(b.p.at).getTime() - new Date(a.p.at).getTime());
  const rows = all.slice(0, VALUES_SHOWN);
  const meanLabel = capitalise(measure.meanLabel ?? 'mean');
  const maxLabel = capitalise(measure.maxLabel ?? 'max');
  const heads = ['Time', 'Series', ...(measure.mean ? [meanLabel] : []), ...(measure.max && measure.max !== measure.mean ? [maxLabel] : []), 'Rows'];
  return h(
    'details',
    { class: 'chart-values' },
    h('summary', {}, 'Values as a table'),
    all.length > rows.length ? h('p', { class: 'hint' }, `The newest ${formatNumber(rows.length)} of ${formatNumber(all.length)} points.`) : null,
    h(
      'div',
      { class: 'table-holder chart-values-holder' },
      h(
        'table',
        // Stacked into labelled cards on a phone, as the grids are.
        { class: 'grid stackable' },
        h('thead', {}, h('tr', {}, heads.map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          rows.map(({ x, p }) =>
            h(
              'tr',
              {},
              h('td', { class: 'date', 'data-label': 'Time' }, formatDate(p.at)),
              h('td', { 'data-label': 'Series' }, seriesName(x)),
              measure.mean ? h('td', { class: 'num', 'data-label': meanLabel }, formatMeasure(p[measure.mean], measure.unit).text) : null,
              measure.max && measure.max !== measure.mean ? h('td', { class: 'num', 'data-label': maxLabel }, formatMeasure(p[measure.max], measure.unit).text) : null,
              h('td', { class: 'num', 'data-label': 'Rows' }, formatNumber(p.count)),
            ),
          ),
        ),
      ),
    ),
  );
}
