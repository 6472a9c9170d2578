// The one grid behind every audit and telemetry page: toolbar filters, server-side sorting, paging
// within `take`, CSV export of the same query, and per statistics column a summary and histogram.
import { api, humanise, problemLines } from './api.js';
import { clear, field, formatDate, formatNumber, h, notice } from './dom.js';
import { GRIDS } from './grids.js';
import { histogram } from './histogram.js';
import { content, startPage } from './layout.js';

const PAGE_SIZE = 25;
const TAKES = [100, 1000, 10000, 100000];

await startPage();
const grid = GRIDS[document.body.dataset.grid];
const root = content();

// ---- state, kept in the address so a reload or a shared link shows the same view --------------

const initial = new URLSearchParams(location.search);
const state = {
  from: initial.get('from') ?? '',
  to: initial.get('to') ?? '',
  search: initial.get('search') ?? '',
  filter: initial.get(grid.filter?.param ?? '') ?? '',
  take: Number(initial.get('take')) || 1000,
  sortField: initial.get('sortField') ?? '',
  sortDirection: (initial.get('sortDirection') ?? 'desc').toLowerCase() === 'asc' ? 'asc' : 'desc',
  page: 0,
};

/** datetime-local (local wall time) ↔ ISO instant. */
function toIso(local) {
  if (!local) return '';
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}
function toLocalInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

function query() {
  const q = new URLSearchParams();
  if (state.from) q.set('from', state.from);
  if (state.to) q.set('to', state.to);
  if (grid.search && state.search) q.set('search', state.search);
  if (grid.filter && state.filter) q.set(grid.filter.param, state.filter);
  q.set('take', String(state.take));
  if (state.sortField) {
    q.set('sortField', state.sortField);
    q.set('sortDirection', state.sortDirection);
  }
  return q;
}

// ---- toolbar ----------------------------------------------------------------------------------

const fromInput = h('input', { type: 'datetime-local', name: 'from', value: toLocalInput(state.from) });
const toInput = h('input', { type: 'datetime-local', name: 'to', value: toLocalInput(state.to) });
const searchInput = grid.search ? h('input', { type: 'search', name: 'search', value: state.search, placeholder: grid.search, maxlength: 256 }) : null;
const filterSelect = grid.filter
  ? h(
      'select',
      { name: grid.filter.param },
      h('option', { value: '' }, 'All'),
      grid.filter.options.map(([id, name]) => h('option', { value: String(id), selected: String(id) === state.filter }, name)),
    )
  : null;
const takeSelect = h('select', { name: 'take' }, TAKES.map((n) => h('option', { value: String(n), selected: n === state.take }, formatNumber(n))));
const exportLink = h('a', { class: 'button', id: 'export-csv', download: `${document.body.dataset.grid}.csv` }, 'Export CSV');

const toolbar = h(
  'form',
  { class: 'toolbar', id: 'grid-toolbar', novalidate: true },
  field('From', fromInput),
  field('To', toInput),
  searchInput ? field('Search', searchInput) : null,
  filterSelect ? field(grid.filter.label, filterSelect) : null,
  field('Rows', takeSelect),
  h('div', { class: 'toolbar-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('button', { type: 'button', id: 'reset-filters', onclick: reset }, 'Reset'), exportLink),
);
const hint = h('p', { class: 'hint' }, `Without From and To the grid shows the last hour (by ${grid.dateLabel ?? 'created'} date).`);
const messages = h('div', { class: 'messages' });
const summary = h('div', { class: 'grid-summary', id: 'grid-summary' });
const statistics = h('div', { class: 'statistics', id: 'statistics' });
const tableHolder = h('div', { class: 'table-holder' });
const pager = h('div', { class: 'pager' });
root.append(toolbar, hint, messages, statistics, summary, tableHolder, pager);

function readToolbar() {
  state.from = toIso(fromInput.value);
  state.to = toIso(toInput.value);
  state.search = searchInput?.value.trim() ?? '';
  state.filter = filterSelect?.value ?? '';
  state.take = Number(takeSelect.value);
}

function reset() {
  fromInput.value = toInput.value = '';
  if (searchInput) searchInput.value = '';
  if (filterSelect) filterSelect.value = '';
  takeSelect.value = '1000';
  state.sortField = '';
  state.sortDirection = 'desc';
  void load();
}

toolbar.addEventListener('submit', (event) => {
  event.preventDefault();
  void load();
});

// ---- rendering ----------------------------------------------------------------------------------

let rows = [];

function cell(column, row) {
  const value = row[column.field];
  if (column.type === 'date') return h('td', { class: 'nowrap' }, formatDate(value));
  if (column.type === 'number') return h('td', { class: 'num' }, formatNumber(value));
  if (column.type === 'outcome') return h('td', {}, h('span', { class: ['badge', value ? 'badge-bad' : 'badge-good'] }, value ? 'Failed' : 'Succeeded'));
  const text = value === null || value === undefined ? '' : String(value);
  return h('td', { class: column.wide ? 'wide' : null, title: column.wide && text.length > 60 ? text : null }, text);
}

function sortBy(column) {
  const key = column.sort ?? column.field;
  if (state.sortField === key) state.sortDirection = state.sortDirection === 'asc' ? 'desc' : 'asc';
  else {
    state.sortField = key;
    state.sortDirection = 'asc';
  }
  void load();
}

function renderTable() {
  const head = h(
    'tr',
    {},
    grid.columns.map((column) => {
      const key = column.sort ?? column.field;
      const active = state.sortField === key;
      return h(
        'th',
        { class: column.type === 'number' ? 'num' : null, 'aria-sort': active ? (state.sortDirection === 'asc' ? 'ascending' : 'descending') : null },
        h('button', { type: 'button', class: 'sort', 'data-field': key, onclick: () => sortBy(column) }, column.label, h('span', { class: 'sort-mark' }, active ? (state.sortDirection === 'asc' ? '▲' : '▼') : '')),
      );
    }),
  );
  const slice = rows.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE);
  const body = h(
    'tbody',
    {},
    slice.length === 0 ? h('tr', {}, h('td', { colspan: grid.columns.length, class: 'empty' }, 'No rows match these filters.')) : slice.map((row) => h('tr', {}, grid.columns.map((c) => cell(c, row)))),
  );
  clear(tableHolder).append(h('table', { class: 'grid', id: 'grid' }, h('thead', {}, head), body));

  const pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
  const go = (page) => () => {
    state.page = page;
    renderTable();
  };
  clear(pager).append(
    h('button', { type: 'button', disabled: state.page === 0, onclick: go(state.page - 1) }, '‹ Previous'),
    h('span', { class: 'muted' }, `Page ${state.page + 1} of ${pages}`),
    h('button', { type: 'button', disabled: state.page >= pages - 1, onclick: go(state.page + 1) }, 'Next ›'),
  );
}

function renderStatistics(stats) {
  clear(statistics);
  for (const name of grid.statistics) {
    const column = grid.columns.find((c) => c.field === name);
    const label = column?.label ?? humanise(name);
    const st = stats?.[name];
    if (!st) continue;
    const figures = [
      ['Min', st.min],
      ['Max', st.max],
      ['Mean', st.mean],
      ['Median', st.median],
      ['Std dev', st.standardDeviation],
    ];
    statistics.append(
      h(
        'section',
        { class: 'card stat', 'data-testid': `statistics-${name}` },
        h('h2', {}, label),
        h('dl', { class: 'figures' }, figures.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, formatNumber(v))))),
        histogram(st.histogram ?? [], { label, testid: `histogram-${name}` }),
      ),
    );
  }
}

async function load() {
  readToolbar();
  state.page = 0;
  const q = query();
  history.replaceState(null, '', `${location.pathname}?${q}`);
  const csv = new URLSearchParams(q);
  csv.set('format', 'csv');
  exportLink.href = `${grid.api}?${csv}`;
  summary.textContent = 'Loading…';
  summary.dataset.state = 'loading';
  clear(messages);
  try {
    const { json } = await api('GET', `${grid.api}?${q}`);
    rows = Array.isArray(json?.rows) ? json.rows : [];
    const total = Number(json?.total ?? rows.length);
    summary.textContent = `${formatNumber(total)} matching ${total === 1 ? 'row' : 'rows'}; ${formatNumber(rows.length)} shown (at most ${formatNumber(state.take)}).`;
    renderStatistics(json?.statistics);
  } catch (error) {
    rows = [];
    summary.textContent = '';
    clear(statistics);
    messages.append(notice('error', problemLines(error)));
  }
  renderTable();
  summary.dataset.state = 'ready';
}

await load();
