// The one grid behind every audit and telemetry page: toolbar filters, server-side sorting, pages of
// 25 within the rows loaded, CSV export of the same query, a Columns menu, and per statistics column
// a summary in human units and a histogram. Everything a person chose is in the address, the page
// number included, so a reload or a shared link shows the same view.
//
// This file holds the page's one state object (grid-state.js) and its one render(): every part
// (grid-toolbar.js, grid-chart.js, grid-statistics.js, grid-table.js) draws itself from the state,
// and an action changes the state, loads what it needs, and renders.
import { api, problemLines } from './api.js';
import { clear, focusOn, h, notice } from './dom.js';
import { gridChart } from './grid-chart.js';
import { DEFAULT_TAKE, EXPORT_TAKE, addressOf, gridQuery, initialState, pageCount, seriesQuery } from './grid-state.js';
import { gridStatistics } from './grid-statistics.js';
import { columnsChooser, gridTable, savedHiddenColumns } from './grid-table.js';
import { gridToolbar } from './grid-toolbar.js';
import { GRIDS } from './grids.js';
import { content, startPage } from './layout.js';

/** @typedef {import('./grid-state.js').GridState} GridState */

await startPage();
const gridName = document.body.dataset.grid ?? '';
const grid = GRIDS[gridName];
const root = content();

const state = initialState(grid, new URLSearchParams(location.search), savedHiddenColumns(grid, gridName));

const toolbar = gridToolbar(grid, gridName, state, { onApply: () => void load(), onReset: reset });
const messages = h('div', { class: 'messages', id: 'grid-messages' });
const chart = gridChart(grid, state, {
  onMeasure: (index) => {
    state.chartMeasure = index;
    void loadChart();
  },
  onBy: (param) => {
    state.chartBy = param;
    void loadChart();
  },
});
const statistics = gridStatistics(grid);
const table = gridTable(grid, {
  onSort: (column) => {
    const key = column.field;
    if (state.sortField === key) state.sortDirection = state.sortDirection === 'asc' ? 'desc' : 'asc';
    else {
      state.sortField = key;
      state.sortDirection = 'asc';
    }
    void load({ keepPage: false });
  },
  onPage: (page) => {
    state.page = page;
    render();
  },
  onTake: (take) => {
    state.take = take;
    void load();
  },
});
const chooser = columnsChooser(grid, gridName, state, (hidden) => {
  state.hidden = hidden;
  render();
});

root.append(
  ...[toolbar.element, toolbar.hint, messages, chart?.element, statistics.element, h('div', { class: 'grid-bar' }, table.summary, chooser), table.note, table.holder, table.pager].filter(
    (part) => part !== null && part !== undefined,
  ),
);

/** @type {string[] | null} */
let problemShown = null;

/**
 * Draws every part from the state (each redraws only what changed). The address follows once nothing
 * is on its way, so an address that says a choice means its rows and chart are drawn.
 */
function render() {
  if (state.problem !== problemShown) {
    problemShown = state.problem;
    clear(messages);
    if (state.problem) messages.append(notice('error', state.problem, { testid: 'grid-error' }));
  }
  chart?.render(state);
  statistics.render(state);
  table.render(state);
  if (state.loaded && state.phase !== 'rows' && state.chartPhase !== 'loading') history.replaceState(null, '', addressOf(grid, state));
}

function reset() {
  toolbar.clear();
  state.take = DEFAULT_TAKE;
  state.sortField = '';
  state.sortDirection = 'desc';
  void load();
}

async function loadChart() {
  if (!grid.chart) return;
  state.chartPhase = 'loading';
  render();
  try {
    const { json } = await api('GET', `${grid.api}/Series?${seriesQuery(grid, state)}`);
    state.series = json;
    state.chartProblem = null;
  } catch (error) {
    state.series = null;
    state.chartProblem = problemLines(error);
  }
  state.chartPhase = 'ready';
  render();
}

/** Reads the toolbar, then the rows and the chart of what it says. */
async function load({ keepPage = false } = {}) {
  toolbar.read(state);
  if (state.from && state.to && new Date(state.from) > new Date(state.to)) {
    state.problem = ['From must not be after To.'];
    render();
    focusOn(messages.firstChild);
    return;
  }
  if (!keepPage) state.page = 0;
  const csv = gridQuery(grid, state, { take: EXPORT_TAKE });
  csv.set('format', 'csv');
  toolbar.exportTo(csv);
  state.phase = 'rows';
  state.problem = null;
  render();
  const chartLoaded = loadChart();
  try {
    const { json } = await api('GET', `${grid.api}?${gridQuery(grid, state)}`);
    state.rows = Array.isArray(json?.rows) ? json.rows : [];
    state.total = Number(json?.total ?? state.rows.length);
    state.statistics = json?.statistics;
  } catch (error) {
    state.rows = [];
    state.total = 0;
    state.statistics = undefined;
    state.problem = problemLines(error);
  }
  state.page = Math.min(state.page, pageCount(state) - 1);
  state.loaded = true;
  state.phase = 'chart';
  render();
  await chartLoaded;
  state.phase = 'ready';
  render();
}

await toolbar.fillLookups();
await load({ keepPage: true });
document.body.dataset.ready = 'true';
