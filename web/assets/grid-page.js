// The one grid behind every audit and telemetry page: toolbar filters, server-side sorting, pages of
// 25 within the rows loaded, CSV export of the same query, a Columns menu, and per statistics column
// a summary in human units and a histogram. Everything a person chose is in the address, the page
// number included, so a reload or a shared link shows the same view.
import { api, humanise, problemLines } from './api.js';
import { clear, field, focusOn, formatDate, formatMeasure, formatMicroseconds, formatNumber, h, isoToWallTime, notice, wallTimeToIso, zoneMode, zoneName } from './dom.js';
import { codeId, codeNote } from './codes.js';
import { GRIDS } from './grids.js';
import { formatBucket, seriesChart } from './chart.js';
import { histogram } from './histogram.js';
import { content, startPage } from './layout.js';
import { deviceCell } from './sessions.js';

const PAGE_SIZE = 25;
const TAKES = [100, 1000, 10000, 100000];
const DEFAULT_TAKE = 1000;
const EXPORT_TAKE = 100000;
/** FailureTypeId PasswordExpired: how a forced password change is asked for, not an attack. */
const PASSWORD_CHANGE_REQUESTED = codeId('failureReasons', 'PasswordExpired');

await startPage();
const gridName = document.body.dataset.grid;
const grid = GRIDS[gridName];
const filters = grid.filters ?? [];
const root = content();

// ---- state, kept in the address -----------------------------------------------------------------

const initial = new URLSearchParams(location.search);
const state = {
  from: initial.get('from') ?? '',
  to: initial.get('to') ?? '',
  search: initial.get('search') ?? '',
  filters: Object.fromEntries(filters.map((f) => [f.param, initial.get(f.param) ?? ''])),
  take: TAKES.includes(Number(initial.get('take'))) ? Number(initial.get('take')) : DEFAULT_TAKE,
  sortField: initial.get('sortField') ?? '',
  sortDirection: (initial.get('sortDirection') ?? 'desc').toLowerCase() === 'asc' ? 'asc' : 'desc',
  // 0-based here, 1-based in the address.
  page: Math.max(0, (Number.parseInt(initial.get('page') ?? '1', 10) || 1) - 1),
  // The chart: which measure, and one line per what ('' for one line over all rows).
  chartMeasure: Math.max(0, Math.min((grid.chart?.measures.length ?? 1) - 1, Number.parseInt(initial.get('chart') ?? '0', 10) || 0)),
  chartBy: initial.has('by') ? (grid.chart?.by.some((b) => b.param === initial.get('by')) ? initial.get('by') : '') : (grid.chart?.by[0]?.param ?? ''),
};

/** datetime-local (wall time in the zone the reader chose, see dom.js) ↔ ISO instant. */
const toIso = wallTimeToIso;
const toLocalInput = isoToWallTime;

/** The API query of the current state (no page: paging happens here, within the rows loaded). */
function query({ take = state.take } = {}) {
  const q = new URLSearchParams();
  if (state.from) q.set('from', state.from);
  if (state.to) q.set('to', state.to);
  if (grid.search && state.search) q.set('search', state.search);
  for (const f of filters) if (state.filters[f.param]) q.set(f.param, state.filters[f.param]);
  q.set('take', String(take));
  if (state.sortField) {
    q.set('sortField', state.sortField);
    q.set('sortDirection', state.sortDirection);
  }
  return q;
}

/** Writes the state into the address (replacing, so Back leaves the page rather than each click). */
function remember() {
  const q = query();
  if (state.take === DEFAULT_TAKE) q.delete('take');
  if (state.page > 0) q.set('page', String(state.page + 1));
  if (grid.chart) {
    if (state.chartMeasure > 0) q.set('chart', String(state.chartMeasure));
    if (state.chartBy !== (grid.chart.by[0]?.param ?? '')) q.set('by', state.chartBy);
  }
  const text = q.toString();
  history.replaceState(null, '', text ? `${location.pathname}?${text}` : location.pathname);
}

// ---- toolbar ----------------------------------------------------------------------------------

const fromInput = h('input', { type: 'datetime-local', name: 'from', value: toLocalInput(state.from) });
const toInput = h('input', { type: 'datetime-local', name: 'to', value: toLocalInput(state.to) });
// Wide enough for its whole placeholder (`size` counts characters; the stylesheet keeps a floor).
const searchInput = grid.search
  ? h('input', { type: 'search', name: 'search', value: state.search, placeholder: grid.search, maxlength: 256, size: grid.search.length + 4 })
  : null;
const filterSelects = filters.map((f) =>
  h(
    'select',
    // data-codes: the server code table its choices come from (checked by test/web-code-tables).
    { name: f.param, 'data-codes': f.codes ?? null },
    h('option', { value: '' }, f.all ?? 'All'),
    (f.options ?? []).map(([value, name]) => h('option', { value: String(value), selected: String(value) === state.filters[f.param] }, name)),
  ),
);

/**
 * A filter whose choices come from the server (`lookup: 'models'`): the models with rows in the last
 * day (one aggregate over a day of rows, cheap beside the grid), named as the Series route names them
 * (the 20 busiest; a model chosen through the address but not among them stays selectable by its
 * GUID). No copy of any name list lives in the browser.
 */
async function fillLookups() {
  await Promise.all(
    filters.map(async (f, i) => {
      if (f.lookup !== 'models') return;
      const select = filterSelects[i];
      const chosen = state.filters[f.param];
      const q = new URLSearchParams({ by: 'entityAnalysisModelGuid', bucketSeconds: '86400', from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() });
      let options = [];
      try {
        const { json } = await api('GET', `${grid.api}/Series?${q}`);
        options = (json?.series ?? []).filter((x) => x.key !== 'other' && x.key !== 'all').map((x) => [x.key, x.name ?? x.key]);
      } catch {
        // Without the list the filter still offers "All models" and any model named in the address.
      }
      if (chosen && !options.some(([value]) => value === chosen)) options.push([chosen, chosen]);
      options.sort((a, b) => String(a[1]).localeCompare(String(b[1])));
      select.replaceChildren(h('option', { value: '' }, f.all ?? 'All'), ...options.map(([value, name]) => h('option', { value, selected: value === chosen }, name)));
    }),
  );
}
const exportLink = h('a', { class: 'button', id: 'export-csv', download: `${gridName}.csv`, title: `Every matching row (up to ${formatNumber(EXPORT_TAKE)}), in the order shown` }, 'Export CSV');

const toolbar = h(
  'form',
  { class: 'toolbar', id: 'grid-toolbar', novalidate: true, 'aria-label': 'Filters' },
  field(`From (${zoneName()})`, fromInput),
  field(`To (${zoneName()})`, toInput),
  searchInput ? field('Search', searchInput) : null,
  filters.map((f, i) => field(f.label, filterSelects[i])),
  h('div', { class: 'toolbar-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('button', { type: 'button', id: 'reset-filters', onclick: reset }, 'Reset'), exportLink),
);
const hint = h(
  'p',
  { class: 'hint' },
  `Without From and To the grid shows the last hour (by ${grid.dateLabel ?? 'created'} date). Dates are shown in ${zoneMode() === 'utc' ? 'UTC' : `your local time (${zoneName()})`}; the CSV export and the API give them in UTC.`,
);
const messages = h('div', { class: 'messages', id: 'grid-messages' });
const statistics = h('div', { class: 'statistics', id: 'statistics' });
const summary = h('p', { class: 'grid-summary', id: 'grid-summary', 'aria-live': 'polite' });
const note = h('div', { class: 'grid-note', id: 'grid-note' });
const tableHolder = h('div', { class: 'table-holder', id: 'grid-holder' });
const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
const takeSelect = h(
  'select',
  { name: 'take', id: 'grid-take' },
  TAKES.map((n) => h('option', { value: String(n), selected: n === state.take }, `${formatNumber(n)} rows`)),
);
takeSelect.addEventListener('change', () => {
  state.take = Number(takeSelect.value);
  void load();
});

// ---- the Columns menu: low-value columns start hidden; the choice is kept in this browser ---------

const columnsKey = `grid-columns:${gridName}`;
let hidden = new Set(grid.columns.filter((c) => c.optional).map((c) => c.field));
try {
  const saved = JSON.parse(localStorage.getItem(columnsKey) ?? 'null');
  if (Array.isArray(saved)) hidden = new Set(saved.filter((name) => grid.columns.some((c) => c.field === name)));
} catch {
  // an unreadable saved choice is ignored
}
const visibleColumns = () => grid.columns.filter((c) => !hidden.has(c.field));
const chooser = h(
  'details',
  { class: 'columns-chooser', id: 'columns-chooser' },
  h('summary', { class: 'button' }, 'Columns'),
  h(
    'fieldset',
    { class: 'chooser-panel' },
    h('legend', { class: 'visually-hidden' }, 'Columns shown'),
    grid.columns.map((column) => {
      const box = h('input', { type: 'checkbox', name: `column-${column.field}`, checked: !hidden.has(column.field) });
      box.addEventListener('change', () => {
        if (box.checked) hidden.delete(column.field);
        else if (visibleColumns().length > 1) hidden.add(column.field);
        else box.checked = true;
        try {
          localStorage.setItem(columnsKey, JSON.stringify([...hidden]));
        } catch {
          // private mode: the choice lasts for this page only
        }
        renderTable();
      });
      return h('label', { class: 'check' }, box, ` ${column.label}`);
    }),
  ),
);
chooser.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && chooser.open) {
    chooser.open = false;
    chooser.querySelector('summary').focus();
  }
});

// ---- the chart over time (contract 17), and the histograms behind a toggle ------------------------

const chartHolder = h('div', { class: 'chart-holder', id: 'chart-holder' });
const chartNote = h('p', { class: 'hint chart-note', id: 'chart-note' });
const measureSelect = grid.chart
  ? h('select', { name: 'chart', id: 'chart-measure', 'aria-label': 'Measure drawn' }, grid.chart.measures.map((m, i) => h('option', { value: String(i), selected: i === state.chartMeasure }, m.label)))
  : null;
const bySelect = grid.chart
  ? h(
      'select',
      { name: 'by', id: 'chart-by', 'aria-label': 'One line per' },
      grid.chart.by.map((b) => h('option', { value: b.param, selected: b.param === state.chartBy }, `Per ${b.label.toLowerCase()}`)),
      h('option', { value: '', selected: state.chartBy === '' }, 'All rows together'),
    )
  : null;
const chartCard = grid.chart
  ? h(
      'section',
      { class: 'card chart-card', id: 'chart-card', 'aria-labelledby': 'chart-title' },
      h('div', { class: 'chart-head' }, h('h2', { id: 'chart-title' }, 'Over time'), h('div', { class: 'chart-controls' }, measureSelect, bySelect)),
      chartHolder,
      chartNote,
    )
  : null;
let lastSeries = null;
measureSelect?.addEventListener('change', () => {
  state.chartMeasure = Number(measureSelect.value);
  void loadChart().then(remember);
});
bySelect?.addEventListener('change', () => {
  state.chartBy = bySelect.value;
  void loadChart().then(remember);
});

const statisticsKey = 'grid-statistics-open';
const statisticsToggle =
  grid.statistics.length > 0
    ? h(
        'details',
        { class: 'statistics-toggle', id: 'statistics-toggle', open: readOpen() },
        h('summary', {}, 'Distribution: figures and histograms over the rows loaded'),
        statistics,
      )
    : null;
function readOpen() {
  try {
    return localStorage.getItem(statisticsKey) === 'open';
  } catch {
    return false;
  }
}
statisticsToggle?.addEventListener('toggle', () => {
  try {
    localStorage.setItem(statisticsKey, statisticsToggle.open ? 'open' : 'closed');
  } catch {
    // private mode: the choice lasts for this page only
  }
});

root.append(...[toolbar, hint, messages, chartCard, statisticsToggle, h('div', { class: 'grid-bar' }, summary, chooser), note, tableHolder, pager].filter(Boolean));

function readToolbar() {
  state.from = toIso(fromInput.value);
  state.to = toIso(toInput.value);
  state.search = searchInput?.value.trim() ?? '';
  filters.forEach((f, i) => (state.filters[f.param] = filterSelects[i].value));
}

function reset() {
  fromInput.value = toInput.value = '';
  if (searchInput) searchInput.value = '';
  for (const select of filterSelects) select.value = '';
  state.take = DEFAULT_TAKE;
  takeSelect.value = String(DEFAULT_TAKE);
  state.sortField = '';
  state.sortDirection = 'desc';
  void load();
}

toolbar.addEventListener('submit', (event) => {
  event.preventDefault();
  void load();
});

// ---- cells ------------------------------------------------------------------------------------

/** A session's length in whole seconds: 45 s, 12 min 5 s, 3 h 20 min. */
const secondsFormat = (seconds) => {
  const n = Math.max(0, Math.round(Number(seconds)));
  return n < 60 ? `${n} s` : formatMicroseconds(n * 1_000_000);
};

/**
 * Text with break opportunities between the parts of a compound name: before an inner capital
 * (WorkflowStatus·LookupAndPersist) and after a dot, slash, hyphen or underscore (node-2.·bank.·example),
 * so a narrow column wraps a long code at its seams instead of widening the table.
 */
function softBreaks(text) {
  if (text.length <= 12) return text;
  const parts = text.split(/(?<=[a-z])(?=[A-Z])|(?<=[./_\-@])/);
  return parts.flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]));
}

/** The cell of `row` in `column`, with data-label so a narrow screen can stack it as "Label value". */
function cell(column, row) {
  const value = row[column.field];
  const td = (attributes, ...children) => h('td', { 'data-label': column.label, 'data-codes': column.codes ?? null, ...attributes }, ...children);
  const empty = value === null || value === undefined || value === '';
  switch (column.type) {
    case 'date':
      return td({ class: 'date' }, dateParts(value));
    case 'number': {
      // As precise as the column's statistics need to tell its values apart (8.912 s beside 8.915 s).
      const shown = formatMeasure(value, column.unit, { resolution: resolutions[column.field] });
      return td({ class: 'num', title: shown.title }, shown.text);
    }
    case 'guid':
      return td({ class: 'guid', title: empty ? null : String(value) }, empty ? '' : `${String(value).slice(0, 8)}…`);
    case 'outcome': {
      if (!value) return td({}, h('span', { class: 'badge badge-good' }, 'Succeeded'));
      if (row.failureTypeId === PASSWORD_CHANGE_REQUESTED) {
        return td({}, h('span', { class: 'badge badge-warn', title: 'The password had to be changed, and this attempt did not yet bring an acceptable new one.' }, 'Change required'));
      }
      return td({}, h('span', { class: 'badge badge-bad' }, 'Failed'));
    }
    case 'failureReason': {
      // What the reason means where its name does not say it: the server's note (codes.js).
      const note = codeNote('failureReasons', row.failureTypeId);
      return td({}, empty ? '' : String(value), note ? h('span', { class: 'cell-note' }, note) : null);
    }
    case 'model':
      // The model's name, its GUID shortened under it (the whole GUID on hover); rows written before
      // names were captured show the GUID alone.
      return td(
        { class: 'model' },
        row[column.field] ? softBreaks(String(row[column.field])) : null,
        row.entityAnalysisModelGuid
          ? h('span', { class: row[column.field] ? 'cell-note guid' : 'guid', title: String(row.entityAnalysisModelGuid) }, `${String(row.entityAnalysisModelGuid).slice(0, 8)}…`)
          : null,
      );
    case 'tags': {
      // An instrument's attributes as "stage=BuildArchiveJson", one per line.
      const pairs = value && typeof value === 'object' ? Object.entries(value) : [];
      return td({ class: 'tags' }, pairs.length === 0 ? '' : pairs.map(([k, v]) => h('div', {}, `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)));
    }
    case 'agent':
      return td({ class: 'agent-cell' }, empty ? '' : deviceCell(String(value)));
    case 'sessionStart':
      return empty
        ? td({ class: 'date muted', title: row.outcomeId === 2 ? 'No session was presented.' : 'No session was open (or, for an older row, its start was not recorded).' }, '—')
        : td({ class: 'date' }, dateParts(value));
    case 'sessionLength':
      return empty
        ? td({ class: 'num muted' }, '—')
        : td({ class: 'num', title: `${formatNumber(value)} s` }, secondsFormat(value));
    default: {
      const text = empty ? '' : String(value);
      // Wide text keeps to one clipped line (the whole of it on hover); other text may break
      // between the parts of a name, never inside a word.
      if (column.wide) return td({ class: 'wide', title: text.length > 30 ? text : null }, h('div', { class: 'clip' }, text));
      return td({}, softBreaks(text), column.sub && row[column.sub] ? h('span', { class: 'cell-note' }, String(row[column.sub])) : null);
    }
  }
}

/**
 * A date cell's text: the date and time kept together, the zone after a space where a narrow column
 * may wrap it onto a line of its own rather than widen the table.
 */
function dateParts(value) {
  const text = formatDate(value);
  const cut = text.lastIndexOf(' ');
  if (cut < 0) return text;
  return [h('span', { class: 'when' }, text.slice(0, cut)), ' ', h('span', { class: 'zone' }, text.slice(cut + 1))];
}

// ---- table, summary and pager -----------------------------------------------------------------

let rows = [];
let total = 0;
let loaded = false;
/** Per statistics column, a tenth of its spread: the precision its values are shown with. */
let resolutions = {};

function sortBy(column) {
  const key = column.sort ?? column.field;
  if (state.sortField === key) state.sortDirection = state.sortDirection === 'asc' ? 'desc' : 'asc';
  else {
    state.sortField = key;
    state.sortDirection = 'asc';
  }
  void load({ keepPage: false });
}

function pageCount() {
  return Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
}

function renderTable() {
  const columns = visibleColumns();
  const head = h(
    'tr',
    {},
    columns.map((column) => {
      const key = column.sort ?? column.field;
      const active = state.sortField === key;
      return h(
        'th',
        { scope: 'col', class: column.type === 'number' ? 'num' : null, 'aria-sort': active ? (state.sortDirection === 'asc' ? 'ascending' : 'descending') : null },
        h('button', { type: 'button', class: 'sort', 'data-field': key, onclick: () => sortBy(column) }, column.label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (state.sortDirection === 'asc' ? '▲' : '▼') : '')),
      );
    }),
  );
  state.page = Math.min(state.page, pageCount() - 1);
  const first = state.page * PAGE_SIZE;
  const slice = rows.slice(first, first + PAGE_SIZE);
  const body = h(
    'tbody',
    {},
    slice.length === 0
      ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, loaded ? 'No rows match these filters.' : ''))
      : slice.map((row) => h('tr', {}, columns.map((c) => cell(c, row)))),
  );
  clear(tableHolder).append(h('table', { class: 'grid stackable', id: 'grid' }, h('thead', {}, head), body));
  renderSummary(first, slice.length);
  renderPager();
  if (loaded) remember();
}

function renderSummary(first, shown) {
  const matching = `${formatNumber(total)} matching ${total === 1 ? 'row' : 'rows'}`;
  const parts = [h('strong', {}, matching)];
  if (shown > 0) parts.push(` · showing ${formatNumber(first + 1)}–${formatNumber(first + shown)} · page ${state.page + 1} of ${pageCount()}`);
  if (total > rows.length) parts.push(` · the newest ${formatNumber(rows.length)} loaded`);
  clear(summary).append(...parts, '.');
  clear(note);
  if (total > rows.length) {
    note.append(
      notice('info', `Only the newest ${formatNumber(rows.length)} of the ${formatNumber(total)} matching rows are loaded into pages. Narrow From and To, load more rows below, or Export CSV for every matching row (up to ${formatNumber(EXPORT_TAKE)}).`, { testid: 'grid-partial' }),
    );
  }
}

function renderPager() {
  const pages = pageCount();
  const go = (page) => () => {
    state.page = page;
    renderTable();
    focusOn(tableHolder.querySelector('table'));
  };
  clear(pager).append(
    h('button', { type: 'button', id: 'page-previous', disabled: state.page === 0, onclick: go(state.page - 1) }, '‹ Previous'),
    h('span', { class: 'muted', id: 'page-status' }, `Page ${state.page + 1} of ${pages}`),
    h('button', { type: 'button', id: 'page-next', disabled: state.page >= pages - 1, onclick: go(state.page + 1) }, 'Next ›'),
    field('Load at most', takeSelect),
  );
}

// ---- statistics -------------------------------------------------------------------------------

function renderStatistics(stats) {
  clear(statistics);
  resolutions = {};
  for (const name of grid.statistics) {
    const column = grid.columns.find((c) => c.field === name);
    const label = column?.label ?? humanise(name);
    const unit = column?.unit;
    const st = stats?.[name];
    if (!st) continue;
    const empty = !Array.isArray(st.histogram) || st.histogram.length === 0;
    const resolution = (Number(st.max) - Number(st.min)) / 10;
    if (resolution > 0) resolutions[name] = resolution;
    const figures = [
      ['Min', st.min, resolution],
      ['Max', st.max, resolution],
      ['Mean', st.mean, resolution],
      ['Median', st.median, resolution],
      ['Std dev', st.standardDeviation, undefined],
    ];
    statistics.append(
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

// ---- loading ----------------------------------------------------------------------------------

/** The Series query of the current filters: the grid's window and codes, no search, sort or take. */
function seriesQuery() {
  const measure = grid.chart.measures[state.chartMeasure];
  const q = new URLSearchParams();
  if (state.from) q.set('from', state.from);
  if (state.to) q.set('to', state.to);
  for (const f of filters) if (state.filters[f.param]) q.set(f.param, state.filters[f.param]);
  if (measure.column) q.set('column', measure.column);
  if (state.chartBy) q.set('by', state.chartBy);
  return q;
}

function drawChart() {
  if (!grid.chart || !lastSeries) return;
  // The Series route takes the window and the codes, not the search: say so when a search is on.
  chartNote.textContent = grid.search && state.search ? `The chart follows From, To and the filters above, not the search “${state.search}”.` : '';
  const measure = grid.chart.measures[state.chartMeasure];
  const by = grid.chart.by.find((b) => b.param === state.chartBy);
  chartHolder.replaceChildren(
    seriesChart(lastSeries, measure, {
      width: chartHolder.clientWidth || 640,
      bucketLabel: `${measure.label}, ${by ? `one line per ${by.label.toLowerCase()}` : 'all rows together'}, per ${formatBucket(lastSeries.bucketSeconds)}`,
    }),
  );
}

async function loadChart() {
  if (!grid.chart) return;
  chartHolder.dataset.state = 'loading';
  try {
    const { json } = await api('GET', `${grid.api}/Series?${seriesQuery()}`);
    lastSeries = json;
    drawChart();
  } catch (error) {
    lastSeries = null;
    chartHolder.replaceChildren(notice('error', problemLines(error), { testid: 'chart-error' }));
  }
  chartHolder.dataset.state = 'ready';
}

// The chart is drawn to the width it has; a resize (a phone turned, a window widened) redraws it.
if (grid.chart && 'ResizeObserver' in window) {
  let width = 0;
  let timer = null;
  new ResizeObserver(() => {
    if (Math.abs(chartHolder.clientWidth - width) < 8) return;
    width = chartHolder.clientWidth;
    clearTimeout(timer);
    timer = setTimeout(drawChart, 120);
  }).observe(chartHolder);
}

async function load({ keepPage = false } = {}) {
  readToolbar();
  if (state.from && state.to && new Date(state.from) > new Date(state.to)) {
    clear(messages).append(notice('error', 'From must not be after To.', { testid: 'grid-error' }));
    focusOn(messages.firstChild);
    return;
  }
  if (!keepPage) state.page = 0;
  const q = query();
  const csv = query({ take: EXPORT_TAKE });
  csv.set('format', 'csv');
  exportLink.href = `${grid.api}?${csv}`;
  summary.textContent = 'Loading…';
  summary.dataset.state = 'loading';
  clear(messages);
  const chart = loadChart();
  try {
    const { json } = await api('GET', `${grid.api}?${q}`);
    rows = Array.isArray(json?.rows) ? json.rows : [];
    total = Number(json?.total ?? rows.length);
    renderStatistics(json?.statistics);
  } catch (error) {
    rows = [];
    total = 0;
    clear(statistics);
    messages.append(notice('error', problemLines(error), { testid: 'grid-error' }));
  }
  loaded = true;
  renderTable();
  await chart;
  summary.dataset.state = 'ready';
}

await fillLookups();
await load({ keepPage: true });
document.body.dataset.ready = 'true';
