// The cells of the grid: how each kind of column (GridColumn.type, src/reads/grid-page.ts) shows its value, with
// data-label so a narrow screen can stack a row as "Label value".
import { codeId, codeNote } from './codes.js';
import { formatDate, formatMeasure, formatMicroseconds, formatNumber, h } from './dom.js';
import { deviceCell } from './sessions.js';

/** @typedef {import('../../src/reads/grid-page').GridColumn} GridColumn */
/** @typedef {import('./page-types.js').Child} Child */

/** FailureTypeId PasswordExpired: how a forced password change is asked for, not an attack. */
const PASSWORD_CHANGE_REQUESTED = codeId('failureReasons', 'PasswordExpired');
/** LogoutOutcomeId NoSession: a sign-out that presented no session. */
const NO_SESSION = codeId('logoutOutcomes', 'NoSession');

/** A session's length in whole seconds: 45 s, 12 min 5 s, 3 h 20 min. @param {unknown} seconds */
const secondsFormat = (seconds) => {
  const n = Math.max(0, Math.round(Number(seconds)));
  return n < 60 ? `${n} s` : formatMicroseconds(n * 1_000_000);
};

/**
 * Text with break opportunities between the parts of a compound name: before an inner capital
 * (WorkflowStatus·LookupAndPersist) and after a dot, slash, hyphen or underscore (node-2.·bank.·example),
 * so a narrow column wraps a long code at its seams instead of widening the table.
 * @param {string} text
 * @returns {Child}
 */
function softBreaks(text) {
  if (text.length <= 12) return text;
  const parts = text.split(/(?<=[a-z])(?=[A-Z])|(?<=[./_\-@])/);
  return parts.flatMap((part, i) => (i === 0 ? [part] : [h('wbr'), part]));
}

/**
 * The cell of `row` in `column`, with data-label so a narrow screen can stack it as "Label value".
 * `resolutions`: per statistics column, the precision its values are shown with.
 * @param {GridColumn} column
 * @param {Record<string, any>} row
 * @param {Record<string, number>} resolutions
 */
export function cell(column, row, resolutions) {
  const value = row[column.field];
  /** @param {Record<string, unknown>} attributes @param {...Child} children */
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
    case 'changes':
      return td({ class: 'changes-cell' }, changesTable(value));
    case 'agent':
      return td({ class: 'agent-cell' }, empty ? '' : deviceCell(String(value)));
    case 'sessionStart':
      return empty
        ? td({ class: 'date muted', title: row.outcomeId === NO_SESSION ? 'No session was presented.' : 'No session was open (or, for an older row, its start was not recorded).' }, '—')
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
 * An AdminChange's `changes` (contract 18: `{"field": [before, after], …}`, a creation with null
 * before, a deletion with null after) as a small table, each field's before and after side by side.
 * A member that is not a [before, after] pair (the `"…": "truncated"` mark of a text cut at its
 * limit) spans both sides; anything but an object is shown as its JSON text.
 * @param {unknown} value
 * @returns {Child}
 */
export function changesTable(value) {
  if (value === null || value === undefined || value === '') return h('span', { class: 'muted' }, '—');
  if (typeof value !== 'object' || Array.isArray(value)) return h('div', { class: 'clip' }, JSON.stringify(value));
  const entries = Object.entries(/** @type {Record<string, unknown>} */ (value));
  if (entries.length === 0) return h('span', { class: 'muted' }, 'No field changed');
  /** @param {unknown} side */
  const shown = (side) => (side === null || side === undefined ? h('td', { class: 'absent', title: 'none' }, '—') : h('td', {}, typeof side === 'string' ? side : JSON.stringify(side)));
  return h(
    'table',
    { class: 'changes' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Field'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'))),
    h(
      'tbody',
      {},
      entries.map(([field, pair]) =>
        Array.isArray(pair) && pair.length === 2
          ? h('tr', { 'data-field': field }, h('th', { scope: 'row' }, field), shown(pair[0]), shown(pair[1]))
          : h('tr', { 'data-field': field }, h('th', { scope: 'row' }, field), h('td', { colspan: 2 }, typeof pair === 'string' ? pair : JSON.stringify(pair))),
      ),
    ),
  );
}

/**
 * A date cell's text: the date and time kept together, the zone after a space where a narrow column
 * may wrap it onto a line of its own rather than widen the table.
 * @param {unknown} value
 */
function dateParts(value) {
  const text = formatDate(value);
  const cut = text.lastIndexOf(' ');
  if (cut < 0) return text;
  return [h('span', { class: 'when' }, text.slice(0, cut)), ' ', h('span', { class: 'zone' }, text.slice(cut + 1))];
}
