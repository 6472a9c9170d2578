// The 10-bucket histogram of a statistics column, drawn as a table (no library, nothing fetched):
// one row per bucket with its range written out, a bar scaled to the busiest bucket, and its count.
// Lying on its side, every bucket's range and count stays readable at any width, and a screen reader
// reads it as the table it is. A set with no rows, or with one value only, gets a sentence instead
// of a chart that would say nothing.
import { formatMeasure, h, s } from './dom.js';

const countFormat = new Intl.NumberFormat();

/** @typedef {import('./api-types.js').ColumnStatistics} ColumnStatistics */
/** @typedef {NonNullable<ColumnStatistics['histogram']>[number]} Bucket */

/**
 * The range of a bucket in the column's unit, precise to the bucket width: "8.912 s – 8.915 s".
 * @param {Bucket} bucket @param {string | undefined} unit @param {number} resolution
 */
function rangeText(bucket, unit, resolution) {
  return `${formatMeasure(bucket.from, unit, { resolution }).text} – ${formatMeasure(bucket.to, unit, { resolution }).text}`;
}

/**
 * The chart, or the sentence that replaces it, for one column's statistics:
 * `{ min, max, histogram: [{ from, to, frequency }] }` with `label` and `unit` ('µs' or none).
 * @param {ColumnStatistics | undefined} statistics
 * @param {{ label?: string, unit?: string, testid?: string }} [options]
 */
export function histogram(statistics, { label, unit, testid } = {}) {
  const buckets = Array.isArray(statistics?.histogram) ? statistics.histogram : [];
  const rows = buckets.reduce((sum, b) => sum + (Number(b.frequency) || 0), 0);
  if (rows === 0) {
    return h('p', { class: 'stat-state', 'data-testid': testid, 'data-state': 'no-data' }, 'No data: no rows in this window, so there is nothing to chart.');
  }
  if (!statistics) throw new Error('unreachable: buckets come from the statistics');
  if (Number(statistics.min) === Number(statistics.max)) {
    const value = formatMeasure(statistics.min, unit);
    return h(
      'p',
      { class: 'stat-state', 'data-testid': testid, 'data-state': 'no-variation' },
      `No variation: all ${countFormat.format(rows)} ${rows === 1 ? 'value is' : 'values are'} `,
      h('strong', { title: value.title }, value.text),
      '.',
    );
  }
  const peak = Math.max(1, ...buckets.map((b) => Number(b.frequency) || 0));
  const resolution = (Number(statistics.max) - Number(statistics.min)) / buckets.length;
  return h(
    'table',
    { class: 'histogram', 'data-testid': testid },
    h('caption', {}, `Distribution of ${label} over ${countFormat.format(rows)} rows: ten equal ranges from the lowest to the highest value.`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', class: 'range' }, 'Range'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Bar')), h('th', { scope: 'col', class: 'count' }, 'Rows'))),
    h(
      'tbody',
      {},
      buckets.map((bucket, i) => {
        const frequency = Number(bucket.frequency) || 0;
        const closed = i === buckets.length - 1 ? 'including' : 'excluding';
        const exact = unit === 'µs' ? ` (${formatMeasure(bucket.from, unit).title} to ${formatMeasure(bucket.to, unit).title}, ${closed} the upper bound)` : ` (${closed} the upper bound)`;
        const bar = s(
          'svg',
          { 'aria-hidden': 'true', focusable: 'false', preserveAspectRatio: 'none' },
          s('rect', { class: 'bar', x: 0, y: 1, height: 12, width: `${((frequency / peak) * 100).toFixed(2)}%`, 'data-frequency': frequency }),
        );
        return h(
          'tr',
          { class: frequency === 0 ? 'empty-bucket' : null, title: `${rangeText(bucket, unit, resolution)}${exact}: ${countFormat.format(frequency)} rows` },
          h('th', { scope: 'row', class: 'range' }, rangeText(bucket, unit, resolution)),
          h('td', { class: 'bar-cell' }, bar),
          h('td', { class: 'count' }, countFormat.format(frequency)),
        );
      }),
    ),
  );
}
