// Administration > Security > Users: the registry (list, create, edit, deactivate, unlock, reset
// password, Revoke Sessions) and each user's API keys (generate, shown once; list; revoke).
import { api, problemLines } from './api.js';
import { codeName } from './codes.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, formatDate, h, notice, wrappingDate } from './dom.js';
import { content, startPage } from './layout.js';
import { brokenRules, passwordProtector, rulesChecklist } from './password.js';
import { passkeysCard } from './passkeys.js';
import { deviceCell, freshness, sessionsCard } from './sessions.js';

const session = await startPage();
const root = content();

const listMessages = h('div', { class: 'messages' });
const listHolder = h('div', { class: 'table-holder' });
const detail = h('div', { class: 'user-detail', id: 'user-detail' });
const newUserButton = h('button', { type: 'button', class: 'primary', id: 'new-user', onclick: () => showCreate() }, 'New user');
const filterInput = h('input', {
  type: 'search',
  id: 'user-filter',
  placeholder: 'Filter by name, email, role or tenant',
  'aria-label': 'Filter users',
  value: new URLSearchParams(location.search).get('tenant') ?? '',
  oninput: () => renderList(),
});
root.append(
  h(
    'div',
    { class: 'users-layout' },
    h('section', { class: 'card users-list' }, h('div', { class: 'card-head' }, h('h2', {}, 'Users'), newUserButton), filterInput, listMessages, listHolder),
    detail,
  ),
);
detail.append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, 'Select a user to see their details, sessions and API keys.')));

let users = [];
/** The roles the caller may give a user (GET /api/RoleRegistry/Assignable), each tenant's together. */
let roles = [];
/** Tenant id → whether it is the landlord tenant (known to a landlord caller only; others have one tenant). */
const landlordTenants = new Set();
let selectedId = null;

const roleName = (user) => user.roleName ?? roles.find((r) => r.id === user.roleRegistryId)?.name ?? (user.roleRegistryId !== undefined ? `Role ${user.roleRegistryId}` : '');
const isLocked = (user) => user.passwordLocked === true;
const isActive = (user) => user.active !== false;

/**
 * What "Password expires" truly means for this user: a password that must be changed expires at the
 * next sign-in, whatever instant is stored; no password at all cannot be used to sign in.
 */
function passwordExpiry(user) {
  if (!user.passwordCreatedDate && !user.passwordExpiryDate) return 'No password set';
  const expiry = user.passwordExpiryDate ? new Date(user.passwordExpiryDate).getTime() : NaN;
  if (Number.isFinite(expiry) && expiry <= Date.now()) return 'At next sign-in (must be changed)';
  return formatDate(user.passwordExpiryDate) || '—';
}

function badges(user) {
  return [
    h('span', { class: ['badge', isActive(user) ? 'badge-good' : 'badge-muted'] }, isActive(user) ? 'Active' : 'Inactive'),
    isLocked(user) ? h('span', { class: 'badge badge-bad' }, 'Locked') : null,
  ];
}

async function loadRoles() {
  try {
    const { json } = await api('GET', '/api/RoleRegistry/Assignable');
    roles = Array.isArray(json) ? json : [];
  } catch {
    roles = [];
  }
  if (session.landlord) {
    try {
      const { json } = await api('GET', '/api/TenantRegistry');
      for (const tenant of Array.isArray(json) ? json : []) if (tenant.landlord) landlordTenants.add(tenant.id);
    } catch {
      // the hint about landlord roles is then left out
    }
  }
}

async function loadUsers() {
  try {
    const { json } = await api('GET', '/api/UserRegistry');
    users = Array.isArray(json) ? json : [];
    clear(listMessages);
  } catch (error) {
    users = [];
    clear(listMessages).append(notice('error', problemLines(error)));
  }
  renderList();
}

function renderList() {
  const term = filterInput.value.trim().toLowerCase();
  const shown = users
    .filter((u) => !term || [u.name, u.email, roleName(u), u.tenantName].some((v) => String(v ?? '').toLowerCase().includes(term)))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  clear(listHolder).append(
    h(
      'table',
      { class: 'grid selectable', id: 'users' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Role'))),
      h(
        'tbody',
        {},
        shown.length === 0
          ? h('tr', {}, h('td', { colspan: 2, class: 'empty' }, 'No users.'))
          : shown.map((user) =>
              h(
                'tr',
                { class: user.id === selectedId ? 'selected' : null, 'data-user': user.name, onclick: () => select(user.id, undefined, { focus: true }) },
                // The name is a link (Tab reaches it, Enter opens it, and it can be opened in a new tab).
                // Only an exceptional state is flagged here (inactive, locked); the detail shows every state.
                h(
                  'td',
                  {},
                  h(
                    'a',
                    {
                      class: 'user-link',
                      href: `?user=${encodeURIComponent(user.name)}`,
                      'aria-current': user.id === selectedId ? 'true' : null,
                      onclick: (e) => (e.preventDefault(), e.stopPropagation(), select(user.id, undefined, { focus: true })),
                    },
                    user.name,
                  ),
                  user.email ? h('div', { class: 'muted small' }, user.email) : null,
                  !isActive(user) || isLocked(user) ? h('div', {}, badges(user).filter((b) => b && !b.classList.contains('badge-good'))) : null,
                ),
                h('td', {}, roleName(user), user.tenantName ? h('div', { class: 'muted small' }, user.tenantName) : null),
              ),
            ),
      ),
    ),
  );
}

// ---- shared form pieces ------------------------------------------------------------------------

/**
 * The role of a user: every role the caller may give, grouped by tenant, with no role chosen in
 * advance for a new user (least privilege is a decision, not a default). The hint under it says what
 * the chosen role means.
 */
function roleInput(selected, { id } = {}) {
  const select = h('select', { name: 'roleRegistryId', required: true, id });
  if (selected === undefined) select.append(h('option', { value: '' }, 'Choose a role…'));
  const current = selected !== undefined && !roles.some((r) => r.id === selected) ? selected : null;
  if (current !== null) select.append(h('option', { value: String(current), selected: true }, 'The current role (not one you may give)'));
  const byTenant = new Map();
  for (const role of roles.filter((r) => r.active !== false || r.id === selected)) {
    if (!byTenant.has(role.tenantName)) byTenant.set(role.tenantName, []);
    byTenant.get(role.tenantName).push(role);
  }
  for (const [tenantName, list] of [...byTenant].sort(([a], [b]) => String(a).localeCompare(String(b)))) {
    select.append(
      h(
        'optgroup',
        { label: tenantName },
        list
          .sort((a, b) => String(a.name).localeCompare(String(b.name)))
          .map((r) => h('option', { value: String(r.id), selected: r.id === selected }, `${r.name}${r.active === false ? ' (inactive)' : ''}`)),
      ),
    );
  }
  const hint = h('div', { class: 'hint role-hint', 'aria-live': 'polite' });
  const describe = () => {
    const role = roles.find((r) => String(r.id) === select.value);
    if (!role) return (hint.textContent = roles.length === 0 ? 'There is no role you may give. Roles are made on the Roles page.' : '');
    if (landlordTenants.has(role.tenantRegistryId)) {
      hint.textContent = `${role.tenantName} is the landlord tenant: its users hold every permission and see every tenant, whatever the role.`;
    } else {
      const names = role.permissions?.length ? role.permissions.map(permissionName).join(', ') : 'no permission (sign-in and own account only)';
      hint.textContent = `Tenant ${role.tenantName}. Permissions: ${names}.`;
    }
  };
  select.addEventListener('change', describe);
  describe();
  return { select, element: h('div', { class: 'role-field' }, field('Role', select), hint) };
}

const permissionName = (id) => codeName('permissions', id) ?? `permission ${id}`;

/** Password fields with the WirePasswordHash choice and must-change flag. */
function passwordFields(prefix) {
  const password = h('input', { type: 'password', name: `${prefix}-password`, autocomplete: 'new-password', id: `${prefix}-password` });
  const repeat = h('input', { type: 'password', name: `${prefix}-repeat`, autocomplete: 'new-password', id: `${prefix}-repeat` });
  const wire = h('input', { type: 'checkbox', id: `${prefix}-wire` });
  const mustChange = h('input', { type: 'checkbox', id: `${prefix}-must-change`, checked: true });
  const element = h(
    'div',
    { class: 'password-fields' },
    h('div', { class: 'row' }, field('Password', password), field('Repeat password', repeat)),
    rulesChecklist(password),
    h(
      'label',
      { class: 'check' },
      wire,
      h(
        'span',
        {},
        ' Scramble the password in the browser before it is sent, so the service never receives the password itself.',
        h('span', { class: 'hint' }, ' The service can then no longer check the password rules; this page checks them. The user’s browser scrambles it the same way at every sign-in.'),
      ),
    ),
    h('label', { class: 'check' }, mustChange, ' The user must change it at the next sign-in'),
  );
  return {
    element,
    problems() {
      const list = brokenRules(password.value).map((p) => p.replace('The new password', 'The password'));
      if (password.value !== repeat.value) list.push('The passwords do not match.');
      return list;
    },
    async body(userName) {
      const protector = await passwordProtector(userName, { wirePasswordHash: wire.checked });
      return { password: await protector.protect(password.value), wirePasswordHash: wire.checked, mustChangePassword: mustChange.checked };
    },
    reset() {
      password.value = repeat.value = '';
      password.dispatchEvent(new Event('input'));
    },
  };
}

/** Runs an action with its button disabled and shows the outcome in `messages`. */
async function act(button, messages, action, success) {
  button.disabled = true;
  clear(messages);
  try {
    await action();
    if (success) messages.append(notice('success', success));
    return true;
  } catch (error) {
    messages.append(notice('error', problemLines(error)));
    return false;
  } finally {
    button.disabled = false;
  }
}

// ---- create ----------------------------------------------------------------------------------

function showCreate() {
  selectedId = null;
  renderList();
  const messages = h('div', { class: 'messages' });
  const name = h('input', { name: 'name', maxlength: 256, required: true, id: 'new-user-name' });
  const email = h('input', { name: 'email', type: 'email', maxlength: 256, id: 'new-user-email' });
  const role = roleInput(undefined, { id: 'new-user-role' });
  const active = h('input', { type: 'checkbox', checked: true, id: 'new-user-active' });
  const passwords = passwordFields('new-user');
  const save = h('button', { type: 'submit', class: 'primary', id: 'create-user' }, 'Create user');
  const form = h(
    'form',
    { class: 'card', novalidate: true },
    h('h2', {}, 'New user'),
    messages,
    h('div', { class: 'row' }, field('User name', name), field('Email', email)),
    h('div', { class: 'row align-start' }, role.element, h('label', { class: 'check inline' }, active, ' Active (can sign in)')),
    passwords.element,
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => showPlaceholder() }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const problems = [...(name.value.trim() ? [] : ['Enter a user name.']), ...(role.select.value ? [] : ['Choose a role.']), ...passwords.problems()];
    if (problems.length > 0) {
      clear(messages).append(notice('error', problems));
      return focusOn(messages.firstChild);
    }
    let created;
    const ok = await act(save, messages, async () => {
      const body = {
        name: name.value.trim(),
        roleRegistryId: Number(role.select.value),
        active: active.checked,
        ...(await passwords.body(name.value.trim())),
      };
      if (email.value.trim()) body.email = email.value.trim();
      created = (await api('POST', '/api/UserRegistry', body)).json;
    });
    if (ok) {
      await loadUsers();
      if (created?.id !== undefined) select(created.id, 'User created.', { focus: true });
    }
  });
  clear(detail).append(form);
  name.focus();
}

function showPlaceholder() {
  clear(detail).append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, 'Select a user to see their details, sessions and API keys.')));
}

// ---- one user ---------------------------------------------------------------------------------

async function select(id, message, { focus = false } = {}) {
  selectedId = id;
  renderList();
  const wantedName = users.find((u) => u.id === id)?.name;
  if (wantedName) history.replaceState(null, '', `?user=${encodeURIComponent(wantedName)}`);
  let user = users.find((u) => u.id === id);
  try {
    user = (await api('GET', `/api/UserRegistry/${encodeURIComponent(id)}`)).json ?? user;
  } catch (error) {
    if (!user) return clear(detail).append(notice('error', problemLines(error)));
  }
  renderUser(user, message);
  // The keyboard follows the choice: the heading of the opened user, so Tab continues in its actions.
  if (focus) focusOn(byId('user-name'));
}

function renderUser(user, message) {
  const id = encodeURIComponent(user.id);
  const messages = h('div', { class: 'messages', id: 'user-messages' });
  if (message) messages.append(notice('success', message));

  const refresh = async (text) => {
    await loadUsers();
    await select(user.id, text);
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
    if (await act(revoke, messages, () => api('POST', `/api/UserRegistry/RevokeTokens/${id}`), `Every session of ${user.name} has been ended.`)) {
      detail.querySelector('#reload-sessions')?.click();
    }
  });

  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-user' }, 'Delete');
  remove.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: `Delete ${user.name}?`, message: 'Their sessions end at once and they can no longer sign in. Their sign-in and sign-out history stays.', confirmLabel: 'Delete user', danger: true }))) return;
    if (await act(remove, messages, () => api('DELETE', `/api/UserRegistry/${id}`))) {
      selectedId = null;
      await loadUsers();
      showPlaceholder();
      detail.prepend(notice('success', `${user.name} is deleted.`));
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
  );

  // Details.
  const detailMessages = h('div', { class: 'messages' });
  const email = h('input', { type: 'email', maxlength: 256, value: user.email ?? '', id: 'edit-email' });
  const role = roleInput(user.roleRegistryId, { id: 'edit-role' });
  const saveDetails = h('button', { type: 'submit', class: 'primary', id: 'save-user' }, 'Save');
  const detailsForm = h('form', { class: 'card', novalidate: true }, h('h2', {}, 'Details'), detailMessages, h('div', { class: 'row align-start' }, field('Email', email), role.element), h('div', { class: 'actions' }, saveDetails));
  detailsForm.addEventListener('submit', async (event) => {
    event.preventDefault();
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
    const ok = await act(resetButton, resetMessages, async () => api('POST', `/api/UserRegistry/${id}/Password`, await passwords.body(user.name)), 'The password is reset and the user’s sessions have ended.');
    if (ok) passwords.reset();
  });

  const sessions = sessionsCard({
    listPath: `/api/UserRegistry/${id}/Sessions`,
    endPath: (sessionId) => `/api/UserRegistry/${id}/Sessions/${encodeURIComponent(sessionId)}`,
  });
  clear(detail).append(head, detailsForm, sessions, passkeysCard({ listPath: `/api/UserRegistry/${id}/Passkeys`, removePath: (passkeyId) => `/api/UserRegistry/${id}/Passkeys/${passkeyId}` }), apiKeys(user), resetForm);
}

// ---- API keys ---------------------------------------------------------------------------------

function apiKeys(user) {
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
                  if (await act(revoke, messages, () => api('DELETE', `/api/UserRegistry/${id}/ApiKey/${encodeURIComponent(key.id)}`), `The key ${key.apiKeyDisplay}… is revoked.`)) await loadKeys();
                });
                return h(
                  'tr',
                  { 'data-key-id': key.id, 'data-key-display': key.apiKeyDisplay },
                  h('td', { class: 'nowrap', 'data-label': 'Key' }, h('code', {}, `${key.apiKeyDisplay}…`)),
                  // The description sits under the name so the row fits the card without scrolling.
                  h('td', { 'data-label': 'Name' }, key.name, key.description ? h('div', { class: 'muted small' }, key.description) : null),
                  h('td', { 'data-label': 'Created' }, wrappingDate(key.createdDate), key.createdUser ? h('div', { class: 'muted small' }, key.createdUser) : null),
                  lastUsed(key),
                  h('td', { 'data-label': '' }, revoke),
                );
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
   */
  function lastUsed(key) {
    return h(
      'td',
      { class: 'key-last-used', 'data-label': 'Last used' },
      h('div', {}, freshness(key.lastUsedDate)),
      key.lastUsedDate ? deviceCell(key.lastUsedUserAgent, { testid: 'key-device' }) : null,
    );
  }

  /** Revoked keys stay visible as history: which key, when it was made and revoked, and by whom. */
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
            h(
              'tr',
              { 'data-key-id': key.id, 'data-key-display': key.apiKeyDisplay },
              h('td', { class: 'nowrap', 'data-label': 'Key' }, h('code', {}, `${key.apiKeyDisplay}…`)),
              h('td', { 'data-label': 'Name' }, key.name, key.description ? h('div', { class: 'muted small' }, key.description) : null),
              h('td', { 'data-label': 'Created' }, wrappingDate(key.createdDate), key.createdUser ? h('div', { class: 'muted small' }, key.createdUser) : null),
              lastUsed(key),
              h('td', { 'data-label': 'Revoked' }, wrappingDate(key.revokedDate), key.revokedBy ? h('div', { class: 'muted small' }, `by ${key.revokedBy}`) : null),
            ),
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
      let created;
      const ok = await act(save, messages, async () => {
        const body = { name: name.value.trim() };
        if (description.value.trim()) body.description = description.value.trim();
        created = (await api('POST', `/api/UserRegistry/${id}/ApiKey`, body)).json;
      });
      if (ok) {
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

/** The clear value of a new key, this once, with a copy button. */
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
    h('div', { class: 'actions' }, h('button', { type: 'button', onclick: (e) => e.target.closest('.key-once').remove() }, 'I have copied it')),
  );
  queueMicrotask(() => value.select());
  return box;
}

await loadRoles();
await loadUsers();
const wanted = new URLSearchParams(location.search).get('user');
const preselect = wanted ? users.find((u) => String(u.name).toLowerCase() === wanted.toLowerCase()) : null;
if (preselect) await select(preselect.id);
document.body.dataset.ready = 'true';
