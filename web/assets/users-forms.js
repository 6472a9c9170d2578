// The Users page's form pieces: the role chooser (what a role means, said under it), the password
// fields (rules, the WirePasswordHash choice, must-change), and the New user form built from them.
import { api } from './api.js';
import { codeName } from './codes.js';
import { clear, field, focusOn, h, notice } from './dom.js';
import { act } from './master-detail.js';
import { brokenRules, passwordProtector, rulesChecklist } from './password.js';

/** @typedef {import('./users-list.js').UsersPage} UsersPage */
/** @typedef {import('./users-list.js').UsersState} UsersState */
/** @typedef {import('./api-types.js').Role} Role */
/** @typedef {import('./api-types.js').User} User */

/** @param {number} id */
const permissionName = (id) => codeName('permissions', id) ?? `permission ${id}`;

/**
 * The role of a user: every role the caller may give, grouped by tenant, with no role chosen in
 * advance for a new user (least privilege is a decision, not a default). The hint under it says what
 * the chosen role means.
 * @param {UsersState} state
 * @param {number | undefined} selected
 * @param {{ id?: string }} [options]
 */
export function roleInput(state, selected, { id } = {}) {
  const { roles, landlordTenants } = state;
  const select = h('select', { name: 'roleRegistryId', required: true, id });
  if (selected === undefined) select.append(h('option', { value: '' }, 'Choose a role…'));
  const current = selected !== undefined && !roles.some((r) => r.id === selected) ? selected : null;
  if (current !== null) select.append(h('option', { value: String(current), selected: true }, 'The current role (not one you may give)'));
  /** @type {Map<string, Role[]>} */
  const byTenant = new Map();
  for (const role of roles.filter((r) => r.active !== false || r.id === selected)) {
    byTenant.set(role.tenantName, [...(byTenant.get(role.tenantName) ?? []), role]);
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
    if (!role) {
      hint.textContent = roles.length === 0 ? 'There is no role you may give. Roles are made on the Roles page.' : '';
    } else if (landlordTenants.has(role.tenantRegistryId)) {
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

/**
 * Password fields with the WirePasswordHash choice and must-change flag.
 * @param {string} prefix
 */
export function passwordFields(prefix) {
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
    /** The request's password part, protected as this user's passwords travel. @param {string} userName */
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

/** The New user form, in the detail. @param {UsersPage} page */
export function showCreate(page) {
  page.state.selectedId = null;
  page.renderList();
  const messages = h('div', { class: 'messages' });
  const name = h('input', { name: 'name', maxlength: 256, required: true, id: 'new-user-name' });
  const email = h('input', { name: 'email', type: 'email', maxlength: 256, id: 'new-user-email' });
  const role = roleInput(page.state, undefined, { id: 'new-user-role' });
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
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => page.showPlaceholder() }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const problems = [...(name.value.trim() ? [] : ['Enter a user name.']), ...(role.select.value ? [] : ['Choose a role.']), ...passwords.problems()];
    if (problems.length > 0) {
      clear(messages).append(notice('error', problems));
      return focusOn(messages.firstChild);
    }
    /** @type {User | undefined} */
    let created;
    const ok = await act(save, messages, async () => {
      /** @type {Record<string, unknown>} */
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
      await page.loadUsers();
      if (created?.id !== undefined) void page.select(created.id, 'User created.', { focus: true });
    }
  });
  page.view.showDetail(form);
  name.focus();
}
