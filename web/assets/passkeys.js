// Passkeys (contract 20): one card listing a user's passkeys (name, created, last used with its
// device, synced or device-bound). Used by /Account/Passkeys (the user's own: add, rename, remove)
// and the Users page (an administrator's view of the selected user: remove).
import { api, ApiError, loginUrl, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { clear, field, formatDate, h, notice } from './dom.js';
import { deviceCell, freshness } from './sessions.js';
import { cancelled, createPasskey, passkeysSupported } from './webauthn.js';

/** @typedef {import('./api-types.js').Passkey} Passkey */

const OWN_PATH = '/api/Authentication/Passkeys';

/** Synced passkeys may be copied to the user's other devices; device-bound ones never leave theirs. @param {Passkey} passkey */
function kindBadge(passkey) {
  return passkey.backupEligible
    ? h('span', { class: 'badge', title: 'May be copied to the owner’s other devices (backed up: ' + (passkey.backedUp ? 'yes' : 'not yet') + ')' }, 'Synced')
    : h('span', { class: 'badge badge-good' }, 'Device-bound');
}

/**
 * A card of passkeys read from `listPath`, each removed through `DELETE removePath(id)`. `own`: the
 * caller's own, with "Add a passkey" and rename. With Passkeys off (404) the card hides itself.
 * @param {{ listPath?: string, removePath?: (id: number) => string, own?: boolean, title?: string }} [options]
 */
export function passkeysCard({ listPath = OWN_PATH, removePath = (id) => `${OWN_PATH}/${id}`, own = false, title = 'Passkeys' } = {}) {
  const messages = h('div', { class: 'messages', id: 'passkey-messages' });
  const holder = h('div', { class: 'table-holder' });
  const head = h('div', { class: 'card-head' }, h('h2', {}, title));
  const card = h('section', { class: 'card', id: 'passkeys' }, head, messages, own ? addForm() : null, holder);

  /** @param {'info' | 'success' | 'error'} kind @param {string | string[]} lines */
  function say(kind, lines) {
    clear(messages).append(notice(kind, lines, { testid: `passkey-${kind}` }));
  }

  async function load() {
    try {
      const res = await api('GET', listPath, undefined, { accept: [404] });
      if (res.status === 404) {
        card.hidden = true;
        return;
      }
      render(Array.isArray(res.json) ? res.json : []);
    } catch (error) {
      clear(holder).append(notice('error', problemLines(error)));
    }
  }

  function addForm() {
    const name = h('input', { name: 'passkeyName', id: 'passkey-name', maxlength: 64, required: true, placeholder: 'e.g. Work laptop', autocomplete: 'off' });
    const add = h('button', { type: 'submit', class: 'primary', id: 'add-passkey' }, 'Add a passkey');
    const form = h('form', { class: 'inline-form', id: 'add-passkey-form', novalidate: true }, field('Name of the new passkey', name), h('div', { class: 'actions' }, add));
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      const label = name.value.trim();
      if (!label) return say('error', 'Give the passkey a name, so you can tell it from others later.');
      if (!passkeysSupported()) return say('error', 'This browser cannot create passkeys.');
      add.disabled = true;
      clear(messages);
      try {
        const options = await api('POST', `${OWN_PATH}/Options`, {}, { accept: [403] });
        if (options.status === 403) {
          return clear(messages).append(
            notice('info', ['For your safety, adding a passkey needs a sign-in within the last 5 minutes.'], { testid: 'passkey-reauthenticate' }),
            h('a', { class: 'button', href: loginUrl(), id: 'passkey-sign-in-again' }, 'Sign in again'),
          );
        }
        const response = await createPasskey(options.json);
        await api('POST', OWN_PATH, { name: label, response });
        name.value = '';
        say('success', `The passkey “${label}” is added. You can now sign in with it.`);
        await load();
      } catch (error) {
        if (cancelled(error)) say('info', 'No passkey was created.');
        else say('error', error instanceof ApiError ? problemLines(error) : `The browser could not create the passkey: ${/** @type {{ message?: unknown } | null | undefined} */ (error)?.message ?? error}`);
      } finally {
        add.disabled = false;
      }
    });
    return form;
  }

  /** @param {Passkey} passkey @param {HTMLButtonElement} button */
  async function remove(passkey, button) {
    const ok = await confirmDialog({
      title: 'Remove this passkey?',
      message: `Remove the passkey “${passkey.name}”? It will no longer sign ${own ? 'you' : 'this user'} in; the copy on the device can then be deleted there.`,
      confirmLabel: 'Remove passkey',
      danger: true,
    });
    if (!ok) return;
    button.disabled = true;
    try {
      await api('DELETE', removePath(passkey.id));
      say('success', 'The passkey is removed.');
      await load();
    } catch (error) {
      button.disabled = false;
      say('error', problemLines(error));
    }
  }

  /** @param {Passkey} passkey @param {HTMLTableCellElement} cell */
  function rename(passkey, cell) {
    const input = h('input', { name: 'rename', maxlength: 64, value: passkey.name, 'aria-label': 'New name' });
    const save = h('button', { type: 'submit', class: 'primary small' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'small' }, 'Cancel');
    const form = h('form', { class: 'rename-form', novalidate: true }, input, save, cancel);
    cancel.addEventListener('click', () => void load());
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      save.disabled = true;
      try {
        await api('PUT', removePath(passkey.id), { name: input.value.trim() });
        say('success', 'The passkey is renamed.');
        await load();
      } catch (error) {
        save.disabled = false;
        say('error', problemLines(error));
      }
    });
    clear(cell).append(form);
    input.focus();
  }

  /** @param {Passkey[]} passkeys */
  function render(passkeys) {
    const columns = ['Name', 'Created', 'Last used', 'Kind', 'Action'];
    clear(holder).append(
      h(
        'table',
        { class: 'grid stackable', id: 'passkey-list' },
        h('thead', {}, h('tr', {}, columns.map((text) => h('th', { scope: 'col' }, text === 'Action' ? h('span', { class: 'visually-hidden' }, text) : text)))),
        h(
          'tbody',
          {},
          passkeys.length === 0
            ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, own ? 'You have no passkeys yet.' : 'No passkeys.'))
            : passkeys.map((passkey) => {
                const nameCell = h('td', { 'data-label': 'Name', class: 'passkey-name' }, passkey.name);
                const removeButton = h('button', { type: 'button', class: 'danger small remove-passkey' }, 'Remove');
                removeButton.addEventListener('click', () => remove(passkey, removeButton));
                const actions = [removeButton];
                if (own) {
                  const renameButton = h('button', { type: 'button', class: 'small rename-passkey' }, 'Rename');
                  renameButton.addEventListener('click', () => rename(passkey, nameCell));
                  actions.unshift(renameButton);
                }
                return h(
                  'tr',
                  { 'data-passkey-id': String(passkey.id) },
                  nameCell,
                  h('td', { class: 'nowrap', 'data-label': 'Created' }, formatDate(passkey.createdDate)),
                  h(
                    'td',
                    { 'data-label': 'Last used', class: 'passkey-used' },
                    freshness(passkey.lastUsedDate, 'Never', { inline: true }),
                    passkey.lastUsedDevice ? h('div', { class: 'muted small' }, deviceCell(passkey.lastUsedDevice, { testid: 'passkey-device' })) : null,
                  ),
                  h('td', { 'data-label': 'Kind' }, kindBadge(passkey)),
                  h('td', { 'data-label': '', class: 'actions-cell' }, ...actions),
                );
              }),
        ),
      ),
    );
    card.dataset.loaded = 'true';
    card.dataset.count = String(passkeys.length);
  }

  void load();
  card.append(
    h('p', { class: 'hint' }, own
      ? 'A passkey signs you in with your device’s screen lock or a security key instead of a password, and cannot be phished. Last used is written at most once a minute.'
      : 'Removing a passkey stops it signing this user in at once.'),
  );
  return card;
}
