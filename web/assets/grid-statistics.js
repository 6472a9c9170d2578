// The grid's statistics: per statistics column a card with its figures in human units and its
// histogram, behind a toggle that remembers whether the reader keeps it open. The spread of each
// column also sets how precisely the grid's cells show its values.
import { humanise } from './api.js';
import { clear, formatMeasure, formatNumber, h } from './dom.js';
import { histogram } from './histogram.js';

/** @typedef {import('../../src/reads/grid-page').GridPage} Grid */
/** @typedef {import('./api-types.js').ColumnStatistics} ColumnStatistics */
/** @typedef {import('./grid-state.js').GridState} GridState */

const OPEN_KEY = 'grid-statistics-open';

/**
 * Per statistics column, a tenth of its spread: the precision its values are shown with (8.912 s
 * beside 8.915 s).
 * @param {Grid} grid @param {Record<string, ColumnStatistics> | undefined} statistics
 * @returns {Record<string, number>}
 */
export function resolutionsOf(grid, statistics) {
  /** @type {Record<string, number>} */
  const resolutions = {};
  for (const name of grid.statistics) {
    const st = statistics?.[name];
    const resolution = st ? (Number(st.max) - Number(st.min)) / 10 : 0;
    if (resolution > 0) resolutions[name] = resolution;
  }
  return resolutions;
}

function readOpen() {
  try {
    return localStorage.getItem(OPEN_KEY) === 'open';
  } catch {
    return false;
  }
}

/** The statistics cards behind their toggle (no toggle for a grid without statistics columns). @param {Grid} grid */
export function gridStatistics(grid) {
  const holder = h('div', { class: 'statistics', id: 'statistics' });
  const toggle =
    grid.statistics.length > 0
      ? h('details', { class: 'statistics-toggle', id: 'statistics-toggle', open: readOpen() }, h('summary', {}, 'Distribution: figures and histograms over the rows loaded'), holder)
      : null;
  toggle?.addEventListener('toggle', () => {
    try {
      localStorage.setItem(OPEN_KEY, toggle.open ? 'open' : 'closed');
    } catch {
      // private mode: the choice lasts for this page only
    }
  });

  /** @param {Record<string, ColumnStatistics> | undefined} stats */
  function draw(stats) {
    clear(holder);
    for (const name of grid.statistics) {
      const column = grid.columns.find((c) => c.field === name);
      const label = column?.label ?? humanise(name);
      const unit = column?.unit;
      const st = stats?.[name];
      if (!st) continue;
      const empty = !Array.isArray(st.histogram) || st.histogram.length === 0;
      const resolution = (Number(st.max) - Number(st.min)) / 10;
      /** @type {[string, unknown, number | undefined][]} */
      const figures = [
        ['Min', st.min, resolution],
        ['Max', st.max, resolution],
        ['Mean', st.mean, resolution],
        ['Median', st.median, resolution],
        ['Std dev', st.standardDeviation, undefined],
      ];
      holder.append(
        h(
          'section',
          { class: 'card stat', 'data-testid': `statistics-${name}`, 'aria-label': `Statistics of ${label}` },
          h('h2', {}, label),
          empty
            ? null
            : h(
                'dl',
                { class: 'figures' },
                figures.map(([k, v, r]) => {
                  const shown = formatMeasure(v, unit, { resolution: r });
                  return h('div', {}, h('dt', {}, k), h('dd', { title: shown.title ?? formatNumber(v) }, shown.text));
                }),
              ),
          histogram(st, { label, unit, testid: `histogram-${name}` }),
        ),
      );
    }
  }

  /** @type {Record<string, ColumnStatistics> | undefined | null} */
  let drawn = null;
  return {
    element: toggle,
    /** Draws the statistics of the rows loaded, when they changed. @param {GridState} state */
    render(state) {
      if (!state.loaded || state.statistics === drawn) return;
      drawn = state.statistics;
      draw(state.statistics);
    },
  };
}
