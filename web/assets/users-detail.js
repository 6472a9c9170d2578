// The Users page's detail of one user: the state changes (unlock, activate or deactivate, revoke
// sessions, delete), the details form, the user's sessions and API keys, and the password reset.
// A panel of its own (sessions, API keys) is one import and one entry in the list at the end.
import { api, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, formatDate, h, notice } from './dom.js';
import { act, historyLink } from './master-detail.js';
import { passkeysCard } from './passkeys.js';
import { sessionsCard } from './sessions.js';
import { apiKeys } from './users-api-keys.js';
import { passwordFields, roleInput } from './users-forms.js';
import { badges, isActive, isLocked } from './users-list.js';

/** @typedef {import('./api-types.js').User} User */
/** @typedef {import('./users-list.js').UsersPage} UsersPage */

/**
 * What "Password expires" truly means for this user: a password that must be changed expires at the
 * next sign-in, whatever instant is stored; no password at all cannot be used to sign in.
 * @param {User} user
 */
function passwordExpiry(user) {
  if (!user.passwordCreatedDate && !user.passwordExpiryDate) return 'No password set';
  const expiry = user.passwordExpiryDate ? new Date(user.passwordExpiryDate).getTime() : NaN;
  if (Number.isFinite(expiry) && expiry <= Date.now()) return 'At next sign-in (must be changed)';
  return formatDate(user.passwordExpiryDate) || '—';
}

/**
 * Selects user `id`: marks it in the list and the address, reads it afresh and shows it.
 * @param {UsersPage} page
 * @param {number} id
 * @param {string} [message] a success to say above it
 * @param {{ focus?: boolean }} [options]
 */
export async function selectUser(page, id, message, { focus = false } = {}) {
  const { state } = page;
  state.selectedId = id;
  page.renderList();
  const wantedName = state.users.find((u) => u.id === id)?.name;
  if (wantedName) history.replaceState(null, '', `?user=${encodeURIComponent(wantedName)}`);
  let user = state.users.find((u) => u.id === id);
  try {
    user = (await api('GET', `/api/UserRegistry/${encodeURIComponent(id)}`)).json ?? user;
  } catch (error) {
    if (!user) return page.view.showDetail(notice('error', problemLines(error)));
  }
  if (!user) return;
  renderUser(page, user, message);
  // The keyboard follows the choice: the heading of the opened user, so Tab continues in its actions.
  if (focus) focusOn(byId('user-name'));
}

/** @param {UsersPage} page @param {User} user @param {string} [message] */
function renderUser(page, user, message) {
  const id = encodeURIComponent(user.id);
  const messages = h('div', { class: 'messages', id: 'user-messages' });
  if (message) messages.append(notice('success', message));

  /** @param {string} text */
  const refresh = async (text) => {
    await page.loadUsers();
    await page.select(user.id, text);
  };

  // Header with the state changes.
  const unlock = h('button', { type: 'button', id: 'unlock-user', hidden: !isLocked(user) }, 'Unlock');
  unlock.addEventListener('click', async () => {
    if (await act(unlock, messages, () => api('PUT', `/api/UserRegistry/${id}`, { passwordLocked: false }))) await refresh('The account is unlocked.');
  });
  const toggle = h('button', { type: 'button', id: 'toggle-active' }, isActive(user) ? 'Deactivate' : 'Activate');
  toggle.addEventListener('click', async () => {
    if (isActive(user) && !(await confirmDialog({ title: `Deactivate ${user.name}?`, message: 'Every session of this user ends at once, and they cannot sign in until they are activated again. Their API keys stop working while they are inactive.', confirmLabel: 'Deactivate', danger: true }))) return;
    if (await act(toggle, messages, () => api('PUT', `/api/UserRegistry/${id}`, { active: !isActive(user) }))) {
      await refresh(isActive(user) ? 'The user is deactivated.' : 'The user is active again.');
    }
  });
  const revoke = h('button', { type: 'button', class: 'danger', id: 'revoke-sessions' }, 'Revoke sessions');
  revoke.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: `End every session of ${user.name}?`, message: 'They are signed out in every browser and will have to sign in again. Their API keys keep working.', confirmLabel: 'End sessions', danger: true }))) return;
    if (await act(revoke, messages, () => api('POST', `/api/UserRegistry/RevokeTokens/${id}`), { success: `Every session of ${user.name} has been ended.` })) {
      /** @type {HTMLButtonElement | null} */ (page.view.detail.querySelector('#reload-sessions'))?.click();
    }
  });

  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-user' }, 'Delete');
  remove.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: `Delete ${user.name}?`, message: 'Their sessions end at once and they can no longer sign in. Their sign-in and sign-out history stays.', confirmLabel: 'Delete user', danger: true }))) return;
    if (await act(remove, messages, () => api('DELETE', `/api/UserRegistry/${id}`))) {
      page.state.selectedId = null;
      await page.loadUsers();
      page.showPlaceholder();
      page.view.detail.prepend(notice('success', `${user.name} is deleted.`));
    }
  });

  const head = h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', { id: 'user-name', tabindex: '-1' }, user.name), h('div', { class: 'badges' }, badges(user))),
    h(
      'dl',
      { class: 'facts' },
      h('div', {}, h('dt', {}, 'Last sign-in'), h('dd', {}, formatDate(user.lastLoginDate) || 'Never')),
      h('div', {}, h('dt', {}, 'Password expires'), h('dd', { id: 'password-expires' }, passwordExpiry(user))),
      h('div', {}, h('dt', {}, 'Password scrambled in the browser'), h('dd', { title: 'WirePasswordHash' }, user.wirePasswordHash ? 'Yes' : 'No')),
      h('div', {}, h('dt', {}, 'Created'), h('dd', {}, [formatDate(user.createdDate), user.createdUser ? ` by ${user.createdUser}` : ''].join(''))),
    ),
    messages,
    h('div', { class: 'actions' }, unlock, toggle, revoke, remove),
    h('ul', { class: 'links spaced', id: 'user-links' }, h('li', {}, historyLink('UserRegistry', user.id, user.name))),
  );

  // Details.
  const detailMessages = h('div', { class: 'messages' });
  const email = h('input', { type: 'email', maxlength: 256, value: user.email ?? '', id: 'edit-email' });
  const role = roleInput(page.state, user.roleRegistryId, { id: 'edit-role' });
  const saveDetails = h('button', { type: 'submit', class: 'primary', id: 'save-user' }, 'Save');
  const detailsForm = h('form', { class: 'card', novalidate: true }, h('h2', {}, 'Details'), detailMessages, h('div', { class: 'row align-start' }, field('Email', email), role.element), h('div', { class: 'actions' }, saveDetails));
  detailsForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    /** @type {{ email: string | null, roleRegistryId?: number }} */
    const body = { email: email.value.trim() || null };
    if (role.select.value && Number(role.select.value) !== user.roleRegistryId) body.roleRegistryId = Number(role.select.value);
    if (await act(saveDetails, detailMessages, () => api('PUT', `/api/UserRegistry/${id}`, body))) await refresh('The details are saved.');
  });

  // Reset password.
  const resetMessages = h('div', { class: 'messages' });
  const passwords = passwordFields('reset');
  const resetButton = h('button', { type: 'submit', class: 'primary', id: 'reset-password-submit' }, 'Reset password');
  const resetForm = h('form', { class: 'card', novalidate: true }, h('h2', {}, 'Reset password'), resetMessages, passwords.element, h('div', { class: 'actions' }, resetButton));
  resetForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const problems = passwords.problems();
    if (problems.length > 0) return clear(resetMessages).append(notice('error', problems));
    const ok = await act(resetButton, resetMessages, async () => api('POST', `/api/UserRegistry/${id}/Password`, await passwords.body(user.name)), { success: 'The password is reset and the user’s sessions have ended.' });
    if (ok) passwords.reset();
  });

  const sessions = sessionsCard({
    listPath: `/api/UserRegistry/${id}/Sessions`,
    endPath: (sessionId) => `/api/UserRegistry/${id}/Sessions/${encodeURIComponent(sessionId)}`,
  });
  const passkeys = passkeysCard({
    listPath: `/api/UserRegistry/${id}/Passkeys`,
    removePath: (passkeyId) => `/api/UserRegistry/${id}/Passkeys/${passkeyId}`,
  });
  page.view.showDetail(head, detailsForm, sessions, passkeys, apiKeys(user), resetForm);
}
