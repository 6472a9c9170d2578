// The grid page's state: what the reader chose (kept in the address, so a reload or a shared link
// shows the same view) and what was loaded, in one object that grid-page.js renders from. The
// queries of the grid read and of its chart are made from it here.

/** @typedef {import('../../src/reads/grid-page').GridPage} Grid */
/** @typedef {import('./api-types.js').ColumnStatistics} ColumnStatistics */
/** @typedef {import('./api-types.js').SeriesAnswer} SeriesAnswer */

export const PAGE_SIZE = 25;
export const TAKES = [100, 1000, 10000, 100000];
export const DEFAULT_TAKE = 1000;
export const EXPORT_TAKE = 100000;

/**
 * @typedef {object} GridState
 * @property {string} from ISO instant, or '' for the default window
 * @property {string} to
 * @property {string} search
 * @property {Record<string, string>} filters by query parameter
 * @property {number} take
 * @property {string} sortField
 * @property {'asc' | 'desc'} sortDirection
 * @property {number} page 0-based here, 1-based in the address
 * @property {number} chartMeasure the index of the measure drawn
 * @property {string} chartBy one line per this parameter ('' for one line over all rows)
 * @property {Set<string>} hidden the fields of the columns not shown (replaced, never changed in place)
 * @property {'' | 'rows' | 'chart' | 'ready'} phase '' before the first load; then waiting for the rows, for the chart, or done
 * @property {boolean} loaded whether rows were read at least once
 * @property {Record<string, unknown>[]} rows the rows loaded (paged here, PAGE_SIZE at a time)
 * @property {number} total how many rows match
 * @property {Record<string, ColumnStatistics> | undefined} statistics
 * @property {string[] | null} problem what to say above the grid
 * @property {'' | 'loading' | 'ready'} chartPhase
 * @property {SeriesAnswer | null} series the last chart answer
 * @property {string[] | null} chartProblem
 */

/**
 * The state a page opens with: the reader's choices from the address, nothing loaded.
 * @param {Grid} grid
 * @param {URLSearchParams} address
 * @param {Set<string>} hidden
 * @returns {GridState}
 */
export function initialState(grid, address, hidden) {
  const chart = grid.chart;
  const by = address.get('by');
  return {
    from: address.get('from') ?? '',
    to: address.get('to') ?? '',
    search: address.get('search') ?? '',
    filters: Object.fromEntries((grid.filters ?? []).map((f) => [f.param, address.get(f.param) ?? ''])),
    take: TAKES.includes(Number(address.get('take'))) ? Number(address.get('take')) : DEFAULT_TAKE,
    sortField: address.get('sortField') ?? '',
    sortDirection: (address.get('sortDirection') ?? 'desc').toLowerCase() === 'asc' ? 'asc' : 'desc',
    page: Math.max(0, (Number.parseInt(address.get('page') ?? '1', 10) || 1) - 1),
    chartMeasure: Math.max(0, Math.min((chart?.measures.length ?? 1) - 1, Number.parseInt(address.get('chart') ?? '0', 10) || 0)),
    chartBy: address.has('by') ? (chart?.by.some((b) => b.param === by) ? (by ?? '') : '') : (chart?.by[0]?.param ?? ''),
    hidden,
    phase: '',
    loaded: false,
    rows: [],
    total: 0,
    statistics: undefined,
    problem: null,
    chartPhase: '',
    series: null,
    chartProblem: null,
  };
}

/** How many pages of PAGE_SIZE the loaded rows make (at least one). @param {GridState} state */
export function pageCount(state) {
  return Math.max(1, Math.ceil(state.rows.length / PAGE_SIZE));
}

/**
 * The API query of the current state (no page: paging happens here, within the rows loaded).
 * @param {Grid} grid @param {GridState} state @param {{ take?: number }} [options]
 */
export function gridQuery(grid, state, { take = state.take } = {}) {
  const q = windowQuery(grid, state, grid.search ? state.search : '');
  q.set('take', String(take));
  if (state.sortField) {
    q.set('sortField', state.sortField);
    q.set('sortDirection', state.sortDirection);
  }
  return q;
}

/**
 * From, To, the search when given, and the filters: what the grid read and its chart share.
 * @param {Grid} grid @param {GridState} state @param {string} [search]
 */
function windowQuery(grid, state, search = '') {
  const q = new URLSearchParams();
  if (state.from) q.set('from', state.from);
  if (state.to) q.set('to', state.to);
  if (search) q.set('search', search);
  for (const f of grid.filters ?? []) if (state.filters[f.param]) q.set(f.param, state.filters[f.param]);
  return q;
}

/** The Series query of the current filters: the grid's window and codes, no search, sort or take. @param {Grid} grid @param {GridState} state */
export function seriesQuery(grid, state) {
  const q = windowQuery(grid, state);
  const measure = grid.chart?.measures[state.chartMeasure];
  if (measure?.column) q.set('column', measure.column);
  if (state.chartBy) q.set('by', state.chartBy);
  return q;
}

/**
 * The address of the current state: the query, the page when past the first, the chart when not
 * its default; the default take left out.
 * @param {Grid} grid @param {GridState} state
 */
export function addressOf(grid, state) {
  const q = gridQuery(grid, state);
  if (state.take === DEFAULT_TAKE) q.delete('take');
  if (state.page > 0) q.set('page', String(state.page + 1));
  if (grid.chart) {
    if (state.chartMeasure > 0) q.set('chart', String(state.chartMeasure));
    if (state.chartBy !== (grid.chart.by[0]?.param ?? '')) q.set('by', state.chartBy);
  }
  const text = q.toString();
  return text ? `${location.pathname}?${text}` : location.pathname;
}
