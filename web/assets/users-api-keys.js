// The Users page's API keys card: a user's keys (generate, shown once with a copy button; list;
// revoke), and the revoked ones kept as history.
import { api, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { clear, field, h, notice, wrappingDate } from './dom.js';
import { act } from './master-detail.js';
import { deviceCell, freshness } from './sessions.js';

/** @typedef {import('./api-types.js').ApiKey} ApiKey */
/** @typedef {import('./api-types.js').User} User */

/** The API keys card of `user`; it loads its list itself. @param {User} user */
export function apiKeys(user) {
  const id = encodeURIComponent(user.id);
  const messages = h('div', { class: 'messages', id: 'api-key-messages' });
  const listHolderKeys = h('div', { class: 'table-holder' });
  const generate = h('button', { type: 'button', class: 'primary', id: 'generate-api-key' }, 'Generate API key');
  const formHolder = h('div');
  const card = h('section', { class: 'card', id: 'api-keys' }, h('div', { class: 'card-head' }, h('h2', {}, 'API keys'), generate), messages, formHolder, listHolderKeys);

  async function loadKeys() {
    try {
      const { json } = await api('GET', `/api/UserRegistry/${id}/ApiKey?includeRevoked=true`);
      renderKeys(Array.isArray(json) ? json : []);
    } catch (error) {
      clear(listHolderKeys).append(notice('error', problemLines(error)));
    }
  }

  /** @param {ApiKey[]} all */
  function renderKeys(all) {
    const keys = all.filter((key) => !key.revoked);
    const revoked = all.filter((key) => key.revoked);
    clear(listHolderKeys).append(
      h(
        'table',
        { class: 'grid stackable', id: 'api-key-list' },
        h('thead', {}, h('tr', {}, ['Key', 'Name', 'Created', 'Last used', 'Action'].map((t) => h('th', { scope: 'col' }, t === 'Action' ? h('span', { class: 'visually-hidden' }, t) : t)))),
        h(
          'tbody',
          {},
          keys.length === 0
            ? h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No active API keys.'))
            : keys.map((key) => {
                const revoke = h('button', { type: 'button', class: 'danger small revoke-key', 'aria-label': `Revoke the key ${key.name}` }, 'Revoke');
                revoke.addEventListener('click', async () => {
                  if (!(await confirmDialog({ title: `Revoke the API key “${key.name}”?`, message: `The key ${key.apiKeyDisplay}… stops working at once for every integration using it. This cannot be undone; it stays listed under Revoked keys.`, confirmLabel: 'Revoke key', danger: true }))) return;
                  if (await act(revoke, messages, () => api('DELETE', `/api/UserRegistry/${id}/ApiKey/${encodeURIComponent(key.id)}`), { success: `The key ${key.apiKeyDisplay}… is revoked.` })) await loadKeys();
                });
                return keyRow(key, h('td', { 'data-label': '' }, revoke));
              }),
        ),
      ),
    );
    listHolderKeys.append(
      h(
        'p',
        { class: 'hint', id: 'last-used-note' },
        'Last used is written at most once a minute, so a key used in the last minute can still show its previous time, or Never. Under it, the client of that use: tap it for the full text it sent.',
      ),
    );
    const history = revokedHistory(revoked);
    if (history) listHolderKeys.append(history);
  }

  /**
   * When the key was last used and, under it, the client of that use, named from the user agent it
   * sent with the full text one tap away (the Sessions page's component). Under the time rather than
   * in a column of its own, and the dates free to break between day and time, so the row fits the
   * Users page's card at 1366 px (the Revoke button was scrolled out of it before).
   * @param {ApiKey} key
   */
  function lastUsed(key) {
    return h(
      'td',
      { class: 'key-last-used', 'data-label': 'Last used' },
      h('div', {}, freshness(key.lastUsedDate)),
      key.lastUsedDate ? deviceCell(key.lastUsedUserAgent, { testid: 'key-device' }) : null,
    );
  }

  /**
   * A key's row: which key, its name (the description under it, so the row fits the card without
   * scrolling), when and by whom it was made, when it was last used, then `last` (its action, or
   * when it was revoked).
   * @param {ApiKey} key @param {HTMLTableCellElement} last
   */
  function keyRow(key, last) {
    return h(
      'tr',
      { 'data-key-id': key.id, 'data-key-display': key.apiKeyDisplay },
      h('td', { class: 'nowrap', 'data-label': 'Key' }, h('code', {}, `${key.apiKeyDisplay}…`)),
      h('td', { 'data-label': 'Name' }, key.name, key.description ? h('div', { class: 'muted small' }, key.description) : null),
      h('td', { 'data-label': 'Created' }, wrappingDate(key.createdDate), key.createdUser ? h('div', { class: 'muted small' }, key.createdUser) : null),
      lastUsed(key),
      last,
    );
  }

  /** Revoked keys stay visible as history: which key, when it was made and revoked, and by whom. @param {ApiKey[]} revoked */
  function revokedHistory(revoked) {
    if (revoked.length === 0) return null;
    return h(
      'details',
      { class: 'history', id: 'revoked-keys' },
      h('summary', {}, `Revoked keys (${revoked.length})`),
      h(
        'table',
        { class: 'grid stackable', id: 'revoked-key-list' },
        h('thead', {}, h('tr', {}, ['Key', 'Name', 'Created', 'Last used', 'Revoked'].map((t) => h('th', { scope: 'col' }, t)))),
        h(
          'tbody',
          {},
          revoked.map((key) =>
            keyRow(key, h('td', { 'data-label': 'Revoked' }, wrappingDate(key.revokedDate), key.revokedBy ? h('div', { class: 'muted small' }, `by ${key.revokedBy}`) : null)),
          ),
        ),
      ),
    );
  }

  generate.addEventListener('click', () => {
    clear(messages);
    const name = h('input', { id: 'api-key-name', maxlength: 256, required: true });
    const description = h('input', { id: 'api-key-description', maxlength: 1024 });
    const save = h('button', { type: 'submit', class: 'primary', id: 'save-api-key' }, 'Save');
    const form = h(
      'form',
      { class: 'inset', novalidate: true },
      h('div', { class: 'row' }, field('Name', name), field('Description (optional)', description)),
      h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => clear(formHolder) }, 'Cancel')),
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!name.value.trim()) return clear(messages).append(notice('error', 'Enter a name for the key.'));
      /** @type {ApiKey | undefined} */
      let created;
      const ok = await act(save, messages, async () => {
        /** @type {{ name: string, description?: string }} */
        const body = { name: name.value.trim() };
        if (description.value.trim()) body.description = description.value.trim();
        created = (await api('POST', `/api/UserRegistry/${id}/ApiKey`, body)).json;
      });
      if (ok && created) {
        clear(formHolder).append(showOnce(created));
        await loadKeys();
      }
    });
    clear(formHolder).append(form);
    name.focus();
  });

  void loadKeys();
  return card;
}

/** The clear value of a new key, this once, with a copy button. @param {ApiKey} created */
function showOnce(created) {
  const value = h('input', { id: 'api-key-value', readonly: true, value: created.apiKey, class: 'mono', 'aria-label': 'API key', spellcheck: 'false' });
  const status = h('span', { class: 'muted small', id: 'copy-status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: 'copy-api-key' }, 'Copy');
  copy.addEventListener('click', async () => {
    value.select();
    try {
      await navigator.clipboard.writeText(value.value);
      status.textContent = 'Copied.';
    } catch {
      status.textContent = document.execCommand('copy') ? 'Copied.' : 'Select the key and copy it.';
    }
  });
  const box = h(
    'div',
    { class: 'key-once', 'data-testid': 'api-key-once' },
    notice('warning', `Copy the key "${created.name}" now. It will not be shown again: only its first eight characters are kept.`),
    h('div', { class: 'copy-row' }, value, copy, status),
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: () => box.remove() }, 'I have copied it')),
  );
  queueMicrotask(() => value.select());
  return box;
}
