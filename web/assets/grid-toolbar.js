// The grid's toolbar: From and To (wall time in the zone the reader chose, see dom.js), the search,
// the filters (a server code table's choices, the models read from the server, or an id typed in), Apply, Reset and
// Export CSV, with the hint on the default window under it.
import { api } from './api.js';
import { field, formatNumber, h, isoToWallTime, wallTimeToIso, zoneMode, zoneName } from './dom.js';
import { EXPORT_TAKE } from './grid-state.js';

/** @typedef {import('../../src/reads/grid-page').GridPage} Grid */
/** @typedef {import('../../src/reads/grid-page').GridFilter} GridFilter */
/** @typedef {import('./grid-state.js').GridState} GridState */

/**
 * The toolbar of `grid`, filled from `state`.
 * @param {Grid} grid
 * @param {string} gridName
 * @param {GridState} state
 * @param {{ onApply: () => void, onReset: () => void }} actions
 */
export function gridToolbar(grid, gridName, state, { onApply, onReset }) {
  const filters = grid.filters ?? [];
  const fromInput = h('input', { type: 'datetime-local', name: 'from', value: isoToWallTime(state.from) });
  const toInput = h('input', { type: 'datetime-local', name: 'to', value: isoToWallTime(state.to) });
  // Wide enough for its whole placeholder (`size` counts characters; the stylesheet keeps a floor).
  const searchInput = grid.search
    ? h('input', { type: 'search', name: 'search', value: state.search, placeholder: grid.search, maxlength: 256, size: grid.search.length + 4 })
    : null;
  /** @type {(HTMLSelectElement | HTMLInputElement)[]} */
  const filterSelects = filters.map((f) =>
    f.input === 'integer'
      ? // An id typed in (the item a history link names); the API refuses what is not an integer.
        h('input', { type: 'text', inputmode: 'numeric', pattern: '[0-9]*', name: f.param, value: state.filters[f.param] ?? '', placeholder: f.all ?? '', maxlength: 10, size: 8 })
      : h(
        'select',
        // data-codes: the server code table its choices come from (checked by test/web-code-tables).
        { name: f.param, 'data-codes': f.codes ?? null },
        h('option', { value: '' }, f.all ?? 'All'),
        (f.options ?? []).map(([value, name]) => h('option', { value: String(value), selected: String(value) === state.filters[f.param] }, name)),
      ),
  );
  const exportLink = h('a', { class: 'button', id: 'export-csv', download: `${gridName}.csv`, title: `Every matching row (up to ${formatNumber(EXPORT_TAKE)}), in the order shown` }, 'Export CSV');
  const element = h(
    'form',
    { class: 'toolbar', id: 'grid-toolbar', novalidate: true, 'aria-label': 'Filters' },
    field(`From (${zoneName()})`, fromInput),
    field(`To (${zoneName()})`, toInput),
    searchInput ? field('Search', searchInput) : null,
    filters.map((f, i) => field(f.label, filterSelects[i])),
    h('div', { class: 'toolbar-actions' }, h('button', { type: 'submit', class: 'primary' }, 'Apply'), h('button', { type: 'button', id: 'reset-filters', onclick: onReset }, 'Reset'), exportLink),
  );
  element.addEventListener('submit', (event) => {
    event.preventDefault();
    onApply();
  });
  const hint = h(
    'p',
    { class: 'hint' },
    `Without From and To the grid shows the last hour (by ${grid.dateLabel ?? 'created'} date). Dates are shown in ${zoneMode() === 'utc' ? 'UTC' : `your local time (${zoneName()})`}; the CSV export and the API give them in UTC.`,
  );

  /**
   * A filter whose choices come from the server (`lookup: 'models'`): the models with rows in the last
   * day (one aggregate over a day of rows, cheap beside the grid), named as the Series route names them
   * (the 20 busiest; a model chosen through the address but not among them stays selectable by its
   * GUID). No copy of any name list lives in the browser.
   * @param {GridFilter} f @param {HTMLSelectElement} select
   */
  async function fillLookup(f, select) {
    const chosen = state.filters[f.param];
    const q = new URLSearchParams({ by: 'entityAnalysisModelGuid', bucketSeconds: '86400', from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() });
    /** @type {[string, string][]} */
    let options = [];
    try {
      const { json } = await api('GET', `${grid.api}/Series?${q}`);
      options = (json?.series ?? []).filter((/** @type {{ key: string }} */ x) => x.key !== 'other' && x.key !== 'all').map((/** @type {{ key: string, name?: string }} */ x) => [x.key, x.name ?? x.key]);
    } catch {
      // Without the list the filter still offers "All models" and any model named in the address.
    }
    if (chosen && !options.some(([value]) => value === chosen)) options.push([chosen, chosen]);
    options.sort((a, b) => String(a[1]).localeCompare(String(b[1])));
    select.replaceChildren(h('option', { value: '' }, f.all ?? 'All'), ...options.map(([value, name]) => h('option', { value, selected: value === chosen }, name)));
  }

  return {
    element,
    hint,
    /** Fills the filters whose choices come from the server. */
    async fillLookups() {
      await Promise.all(filters.map((f, i) => (f.lookup === 'models' ? fillLookup(f, /** @type {HTMLSelectElement} */ (filterSelects[i])) : undefined)));
    },
    /** Reads the fields into the state. @param {GridState} into */
    read(into) {
      into.from = wallTimeToIso(fromInput.value);
      into.to = wallTimeToIso(toInput.value);
      into.search = searchInput?.value.trim() ?? '';
      filters.forEach((f, i) => (into.filters[f.param] = filterSelects[i].value.trim()));
    },
    /** Empties every field. */
    clear() {
      fromInput.value = toInput.value = '';
      if (searchInput) searchInput.value = '';
      for (const select of filterSelects) select.value = '';
    },
    /** Points Export CSV at the query of the state. @param {URLSearchParams} csv */
    exportTo(csv) {
      exportLink.href = `${grid.api}?${csv}`;
    },
  };
}
