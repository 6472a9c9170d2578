// The grid's table and what frames it: the Columns menu (low-value columns start hidden; the choice
// is kept in this browser), the summary line and partial-load note, the table with its sort buttons,
// and the pager with the number of rows to load. Each is drawn from the page's state (grid-state.js).
import { clear, field, focusOn, formatNumber, h, notice } from './dom.js';
import { cell } from './grid-cells.js';
import { EXPORT_TAKE, PAGE_SIZE, TAKES, pageCount } from './grid-state.js';
import { resolutionsOf } from './grid-statistics.js';

/** @typedef {import('../../src/reads/grid-page').GridPage} Grid */
/** @typedef {import('../../src/reads/grid-page').GridColumn} GridColumn */
/** @typedef {import('./grid-state.js').GridState} GridState */

/**
 * The columns a reader hid on this grid before, else the optional ones.
 * @param {Grid} grid @param {string} gridName
 */
export function savedHiddenColumns(grid, gridName) {
  try {
    const saved = JSON.parse(localStorage.getItem(columnsKey(gridName)) ?? 'null');
    if (Array.isArray(saved)) return new Set(saved.filter((name) => grid.columns.some((c) => c.field === name)));
  } catch {
    // an unreadable saved choice is ignored
  }
  return new Set(grid.columns.filter((c) => c.optional).map((c) => c.field));
}

/** @param {string} gridName */
const columnsKey = (gridName) => `grid-columns:${gridName}`;

/** @param {Grid} grid @param {GridState} state */
const visibleColumns = (grid, state) => grid.columns.filter((c) => !state.hidden.has(c.field));

/**
 * The Columns menu: a box per column; at least one stays shown. `onChange` gets the new hidden set.
 * @param {Grid} grid @param {string} gridName @param {GridState} state @param {(hidden: Set<string>) => void} onChange
 */
export function columnsChooser(grid, gridName, state, onChange) {
  const chooser = h(
    'details',
    { class: 'columns-chooser', id: 'columns-chooser' },
    h('summary', { class: 'button' }, 'Columns'),
    h(
      'fieldset',
      { class: 'chooser-panel' },
      h('legend', { class: 'visually-hidden' }, 'Columns shown'),
      grid.columns.map((column) => {
        const box = h('input', { type: 'checkbox', name: `column-${column.field}`, checked: !state.hidden.has(column.field) });
        box.addEventListener('change', () => {
          const hidden = new Set(state.hidden);
          if (box.checked) hidden.delete(column.field);
          else if (visibleColumns(grid, state).length > 1) hidden.add(column.field);
          else box.checked = true;
          try {
            localStorage.setItem(columnsKey(gridName), JSON.stringify([...hidden]));
          } catch {
            // private mode: the choice lasts for this page only
          }
          onChange(hidden);
        });
        return h('label', { class: 'check' }, box, ` ${column.label}`);
      }),
    ),
  );
  chooser.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && chooser.open) {
      chooser.open = false;
      chooser.querySelector('summary')?.focus();
    }
  });
  return chooser;
}

/**
 * The table, its summary and its pager.
 * @param {Grid} grid
 * @param {{ onSort: (column: GridColumn) => void, onPage: (page: number) => void, onTake: (take: number) => void }} actions
 */
export function gridTable(grid, { onSort, onPage, onTake }) {
  const summary = h('p', { class: 'grid-summary', id: 'grid-summary', 'aria-live': 'polite' });
  const note = h('div', { class: 'grid-note', id: 'grid-note' });
  const holder = h('div', { class: 'table-holder', id: 'grid-holder' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' });
  const takeSelect = h('select', { name: 'take', id: 'grid-take' });
  takeSelect.addEventListener('change', () => onTake(Number(takeSelect.value)));

  /** @param {GridState} state */
  function renderTable(state) {
    const columns = visibleColumns(grid, state);
    const resolutions = resolutionsOf(grid, state.statistics);
    const head = h(
      'tr',
      {},
      columns.map((column) => {
        // A column the database cannot order (a JSON object) has a plain heading.
        if (column.unsorted) return h('th', { scope: 'col' }, column.label);
        const key = column.field;
        const active = state.sortField === key;
        return h(
          'th',
          { scope: 'col', class: column.type === 'number' ? 'num' : null, 'aria-sort': active ? (state.sortDirection === 'asc' ? 'ascending' : 'descending') : null },
          h('button', { type: 'button', class: 'sort', 'data-field': key, onclick: () => onSort(column) }, column.label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (state.sortDirection === 'asc' ? '▲' : '▼') : '')),
        );
      }),
    );
    const first = state.page * PAGE_SIZE;
    const slice = state.rows.slice(first, first + PAGE_SIZE);
    const body = h(
      'tbody',
      {},
      slice.length === 0
        ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, state.loaded ? 'No rows match these filters.' : ''))
        : slice.map((row) => h('tr', {}, columns.map((c) => cell(c, row, resolutions)))),
    );
    clear(holder).append(h('table', { class: 'grid stackable', id: 'grid' }, h('thead', {}, head), body));
  }

  /** @param {GridState} state */
  function renderSummary(state) {
    summary.dataset.state = state.phase === 'ready' ? 'ready' : 'loading';
    if (state.phase === 'rows') {
      summary.textContent = 'Loading…';
      return;
    }
    const { rows, total } = state;
    const first = state.page * PAGE_SIZE;
    const shown = Math.min(PAGE_SIZE, Math.max(0, rows.length - first));
    /** @type {(Node | string)[]} */
    const parts = [h('strong', {}, `${formatNumber(total)} matching ${total === 1 ? 'row' : 'rows'}`)];
    if (shown > 0) parts.push(` · showing ${formatNumber(first + 1)}–${formatNumber(first + shown)} · page ${state.page + 1} of ${pageCount(state)}`);
    if (total > rows.length) parts.push(` · the newest ${formatNumber(rows.length)} loaded`);
    clear(summary).append(...parts, '.');
    clear(note);
    if (total > rows.length) {
      note.append(
        notice('info', `Only the newest ${formatNumber(rows.length)} of the ${formatNumber(total)} matching rows are loaded into pages. Narrow From and To, load more rows below, or Export CSV for every matching row (up to ${formatNumber(EXPORT_TAKE)}).`, { testid: 'grid-partial' }),
      );
    }
  }

  /** @param {GridState} state */
  function renderPager(state) {
    const pages = pageCount(state);
    clear(takeSelect).append(...TAKES.map((n) => h('option', { value: String(n), selected: n === state.take }, `${formatNumber(n)} rows`)));
    /** @param {number} page */
    const go = (page) => () => {
      onPage(page);
      focusOn(holder.querySelector('table'));
    };
    clear(pager).append(
      h('button', { type: 'button', id: 'page-previous', disabled: state.page === 0, onclick: go(state.page - 1) }, '‹ Previous'),
      h('span', { class: 'muted', id: 'page-status' }, `Page ${state.page + 1} of ${pages}`),
      h('button', { type: 'button', id: 'page-next', disabled: state.page >= pages - 1, onclick: go(state.page + 1) }, 'Next ›'),
      field('Load at most', takeSelect),
    );
  }

  /** @type {unknown[] | null} */
  let drawn = null;
  return {
    summary,
    note,
    holder,
    pager,
    /**
     * Draws what changed: the summary always (it follows the loading), the table and pager when
     * the rows, page, sort, columns or statistics changed (redrawing them would close a device's
     * disclosure a reader opened).
     * @param {GridState} state
     */
    render(state) {
      if (state.phase === '') return;
      renderSummary(state);
      if (takeSelect.options.length > 0) takeSelect.value = String(state.take);
      if (state.phase === 'rows') return;
      const inputs = [state.rows, state.total, state.page, state.take, state.sortField, state.sortDirection, state.hidden, state.statistics];
      if (drawn && inputs.every((value, i) => value === drawn?.[i])) return;
      drawn = inputs;
      renderTable(state);
      renderPager(state);
    },
  };
}
