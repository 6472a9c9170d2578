// The layout of the registry pages (tenants, roles, users): a card listing the items beside the
// selected one's detail, where a placeholder stands while nothing is selected. Each page keeps what
// it shows in one state object and draws the list from it; this module owns the frame, the
// selectable rows and links, and the way an action shows its outcome.
import { problemLines } from './api.js';
import { clear, focusOn, h, notice } from './dom.js';

/** @typedef {import('./page-types.js').Child} Child */

/**
 * The list card beside the detail. `head`: what the list card shows above its messages and table
 * (title, buttons, hints, filters); `listHolder`: attributes of the element the list is drawn in.
 * @param {{ listClass?: string, head: Child[], listHolder?: Record<string, string>, detailClass: string, detailId: string, placeholder: string }} options
 */
export function masterDetail({ listClass, head, listHolder: holderAttributes = { class: 'table-holder' }, detailClass, detailId, placeholder }) {
  const listMessages = h('div', { class: 'messages' });
  const listHolder = h('div', holderAttributes);
  const detail = h('div', { class: detailClass, id: detailId });
  const element = h('div', { class: 'users-layout' }, h('section', { class: ['card', listClass] }, head, listMessages, listHolder), detail);
  return {
    element,
    listMessages,
    listHolder,
    detail,
    /** Shows the sentence that stands for "nothing selected". */
    showPlaceholder() {
      clear(detail).append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, placeholder)));
    },
    /** Replaces the detail. @param {...(Node | string)} parts */
    showDetail(...parts) {
      clear(detail).append(...parts);
    },
    /** The list's messages: emptied after a good load, the problem after a failed one. @param {unknown} [error] */
    listOutcome(error) {
      clear(listMessages);
      if (error !== undefined) listMessages.append(notice('error', problemLines(error)));
    },
  };
}

/** @typedef {ReturnType<typeof masterDetail>} MasterDetail */

/**
 * A selectable list's table: a header row, then `rows`, or one row saying `empty`.
 * @param {Record<string, string>} attributes
 * @param {string[]} headers
 * @param {HTMLTableRowElement[]} rows
 * @param {string} [empty]
 */
export function selectableTable(attributes, headers, rows, empty = '') {
  return h(
    'table',
    attributes,
    h('thead', {}, h('tr', {}, headers.map((text) => h('th', { scope: 'col' }, text)))),
    h('tbody', {}, rows.length === 0 ? h('tr', {}, h('td', { colspan: headers.length, class: 'empty' }, empty)) : rows),
  );
}

/**
 * A row of a selectable list: a click anywhere on it selects the item.
 * @param {{ selected: boolean, onSelect: () => void, attributes?: Record<string, string> }} row
 * @param {...Child} cells
 */
export function selectableRow({ selected, onSelect, attributes = {} }, ...cells) {
  return h('tr', { class: selected ? 'selected' : null, ...attributes, onclick: onSelect }, ...cells);
}

/**
 * The item's name as a link to it: Tab reaches it, Enter opens it in place, and it can be opened in
 * a new tab.
 * @param {string} text
 * @param {string} href
 * @param {() => void} onSelect
 * @param {{ current?: boolean }} [options] `current` marks the selected item for a screen reader.
 */
export function selectLink(text, href, onSelect, { current } = {}) {
  return h(
    'a',
    {
      class: 'user-link',
      href,
      'aria-current': current ? 'true' : null,
      onclick: (/** @type {Event} */ event) => {
        event.preventDefault();
        event.stopPropagation();
        onSelect();
      },
    },
    text,
  );
}

/**
 * Runs an action with its button disabled and shows the outcome in `messages`: the problem when it
 * fails (taking the keyboard focus with `focusError`), the `success` sentence when it succeeds.
 * Answers whether it succeeded.
 * @param {HTMLButtonElement} button
 * @param {HTMLElement} messages
 * @param {() => Promise<unknown>} action
 * @param {{ success?: string, focusError?: boolean }} [options]
 * @returns {Promise<boolean>}
 */
export async function act(button, messages, action, { success, focusError = false } = {}) {
  button.disabled = true;
  clear(messages);
  try {
    await action();
    if (success) messages.append(notice('success', success));
    return true;
  } catch (error) {
    messages.append(notice('error', problemLines(error)));
    if (focusError) focusOn(messages.firstChild);
    return false;
  } finally {
    button.disabled = false;
  }
}

/**
 * The start of every history link's window: before any administrative change was recorded, so the
 * AdminChanges grid shows an item's whole history rather than its default last hour.
 */
const HISTORY_FROM = '2000-01-01T00:00:00.000Z';

/**
 * A link to the history of one registry item (contract 18): the AdminChanges grid filtered to its
 * targetTable and targetId (the filters grid-state.js reads from the address), over all time.
 * @param {'TenantRegistry' | 'RoleRegistry' | 'UserRegistry'} targetTable
 * @param {number} targetId
 * @param {string} name shown in the link's text
 */
export function historyLink(targetTable, targetId, name) {
  const query = new URLSearchParams({ targetTable, targetId: String(targetId), from: HISTORY_FROM });
  return h('a', { class: 'history-link', href: `/Administration/Security/AdminChanges?${query}` }, `History of ${name}`);
}
