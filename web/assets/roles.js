// Administration > Security > Roles (permission ReadWriteSecurityRole): the roles of the tenants the
// caller administers, each with the permissions it grants. A landlord picks the tenant of a new role;
// anyone else makes roles in their own tenant and can grant only what they hold themselves (the API
// refuses the rest). What each permission lets a user do is the server's note (codes.js).
import { api } from './api.js';
import { codeId, codeNote } from './codes.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { content, startPage } from './layout.js';
import { act, historyLink, masterDetail, selectLink, selectableRow, selectableTable } from './master-detail.js';

/** @typedef {import('./api-types.js').Role} Role */
/** @typedef {import('./api-types.js').Tenant} Tenant */
/** @typedef {import('./api-types.js').Permission} Permission */

const session = await startPage();
/** Whether the administrative changes (permission 35, contract 18) are this caller's to read. */
const mayReadHistory = session.landlord || session.permissions.includes(codeId('permissions', 'ReadWriteSecurityUser'));
const root = content();

/** What the page shows: the roles, tenants and permissions read, and the role selected. */
const state = {
  /** @type {Role[]} */
  roles: [],
  /** @type {Tenant[]} */
  tenants: [],
  /** @type {Permission[]} */
  permissions: [],
  /** @type {number | null} */
  selectedId: null,
};

const tenantFilter = h('select', { id: 'tenant-filter', name: 'tenant' }, h('option', { value: '' }, 'All tenants'));
tenantFilter.addEventListener('change', () => {
  const q = tenantFilter.value ? `?tenant=${tenantFilter.value}` : '';
  history.replaceState(null, '', `${location.pathname}${q}`);
  renderList();
});
const view = masterDetail({
  head: [
    h('div', { class: 'card-head' }, h('h2', {}, 'Roles'), h('button', { type: 'button', class: 'primary', id: 'new-role', onclick: () => showForm(null) }, 'New role')),
    h('p', { class: 'hint' }, 'A role is a set of permissions within one tenant. Give each user the role with the least it needs.'),
    session.landlord ? field('Tenant', tenantFilter) : null,
  ],
  listHolder: { id: 'roles-list' },
  detailClass: 'role-detail',
  detailId: 'role-detail',
  placeholder: 'Select a role to see and change its permissions.',
});
root.append(view.element);

/** @param {number} id */
const tenantOf = (id) => state.tenants.find((t) => t.id === id);
/** @param {number} id */
const permissionName = (id) => state.permissions.find((p) => p.id === id)?.name ?? `Permission ${id}`;

async function load() {
  try {
    const [r, p] = await Promise.all([api('GET', '/api/RoleRegistry'), api('GET', '/api/PermissionSpecification')]);
    state.roles = Array.isArray(r.json) ? r.json : [];
    state.permissions = Array.isArray(p.json) ? p.json : [];
    if (session.landlord) {
      const t = await api('GET', '/api/TenantRegistry');
      state.tenants = Array.isArray(t.json) ? t.json : [];
    } else {
      state.tenants = [{ id: session.tenantRegistryId, name: session.tenantName, landlord: false, active: true }];
    }
    view.listOutcome();
  } catch (error) {
    view.listOutcome(error);
  }
  const chosen = tenantFilter.value || new URLSearchParams(location.search).get('tenant') || '';
  clear(tenantFilter).append(
    h('option', { value: '' }, 'All tenants'),
    ...[...state.tenants].sort((a, b) => String(a.name).localeCompare(String(b.name))).map((t) => h('option', { value: String(t.id), selected: String(t.id) === chosen }, t.name)),
  );
  renderList();
}

/** The roles, one table per tenant (only the tenant of the filter when one is chosen). */
function renderList() {
  const only = Number(tenantFilter.value) || null;
  /** @type {Map<number, Role[]>} */
  const groups = new Map();
  for (const role of state.roles) {
    if (only && role.tenantRegistryId !== only) continue;
    groups.set(role.tenantRegistryId, [...(groups.get(role.tenantRegistryId) ?? []), role]);
  }
  /** @param {number} id */
  const groupName = (id) => String(tenantOf(id)?.name ?? state.roles.find((r) => r.tenantRegistryId === id)?.tenantName);
  const ordered = [...groups].sort(([a], [b]) => groupName(a).localeCompare(groupName(b)));
  const holder = clear(view.listHolder);
  if (ordered.length === 0) holder.append(h('p', { class: 'muted' }, only ? 'This tenant has no roles yet.' : 'No roles yet.'));
  for (const [tenantId, list] of ordered) {
    const tenantName = list[0].tenantName;
    const rows = list
      .sort((a, b) => String(a.name).localeCompare(String(b.name)))
      .map((role) =>
        selectableRow(
          { selected: role.id === state.selectedId, onSelect: () => showForm(role), attributes: { 'data-role': role.name } },
          h(
            'td',
            {},
            selectLink(role.name, `?role=${role.id}`, () => showForm(role, { focus: true })),
            role.active === false ? h('div', {}, h('span', { class: 'badge badge-muted' }, 'Inactive')) : null,
          ),
          h('td', {}, role.permissions.length ? role.permissions.map(permissionName).join(', ') : h('span', { class: 'muted' }, 'None')),
        ),
      );
    holder.append(
      h('h3', { class: 'group-title' }, tenantName, tenantOf(tenantId)?.landlord ? h('span', { class: 'badge badge-warn', title: 'Users of the landlord tenant hold every permission, whatever their role.' }, ' Landlord') : null),
      h('div', { class: 'table-holder' }, selectableTable({ class: 'grid selectable roles', 'data-tenant': tenantName }, ['Role', 'Permissions'], rows)),
    );
  }
}

/**
 * The form of a new role (role null) or of an existing one.
 * @param {Role | null} role
 * @param {{ message?: string, focus?: boolean }} [options]
 */
function showForm(role, { message, focus = false } = {}) {
  state.selectedId = role?.id ?? null;
  renderList();
  if (role) history.replaceState(null, '', `${location.pathname}?role=${role.id}`);
  const messages = h('div', { class: 'messages', id: 'role-messages' });
  if (message) messages.append(notice('success', message));
  const name = h('input', { id: 'role-name', maxlength: 256, value: role?.name ?? '', autocomplete: 'off' });
  const active = h('input', { type: 'checkbox', id: 'role-active', checked: role ? role.active !== false : true });
  // The tenant: chosen for a new role by a landlord, fixed otherwise (a role never moves).
  const preset = Number(tenantFilter.value) || null;
  const tenantSelect = h(
    'select',
    { id: 'role-tenant', name: 'tenantRegistryId', disabled: Boolean(role) || !session.landlord },
    !role && session.landlord ? h('option', { value: '' }, 'Choose a tenant…') : null,
    [...state.tenants]
      .sort((a, b) => String(a.name).localeCompare(String(b.name)))
      .map((t) => h('option', { value: String(t.id), selected: role ? t.id === role.tenantRegistryId : t.id === (preset ?? (session.landlord ? null : session.tenantRegistryId)) }, t.name)),
  );
  const landlordNote = h('p', { class: 'hint', id: 'role-landlord-note' });
  const describeTenant = () => {
    const tenant = tenantOf(Number(tenantSelect.value));
    landlordNote.textContent = tenant?.landlord ? `${tenant.name} is the landlord tenant: its users hold every permission whatever their role, so these boxes change nothing for them.` : '';
  };
  tenantSelect.addEventListener('change', describeTenant);
  describeTenant();

  const held = new Set(session.permissions);
  const boxes = state.permissions.map((permission) => {
    const grantable = session.landlord || held.has(permission.id);
    const box = h('input', { type: 'checkbox', name: 'permission', value: String(permission.id), id: `permission-${permission.id}`, checked: role?.permissions.includes(permission.id) ?? false, disabled: !grantable });
    return h(
      'div',
      {},
      h('label', { class: 'check', for: box.id }, box, h('span', {}, ` ${permission.name} `, h('span', { class: 'muted small' }, `(${permission.id})`))),
      h('div', { class: 'hint' }, codeNote('permissions', permission.id) ?? '', grantable ? '' : ' You do not hold it, so you cannot grant it.'),
    );
  });
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-role' }, role ? 'Save' : 'Create role');
  const form = h(
    'form',
    { class: 'card', novalidate: true, id: 'role-form' },
    h('h2', { id: 'role-title', tabindex: '-1' }, role ? role.name : 'New role'),
    messages,
    h('div', { class: 'row' }, field('Name', name), field('Tenant', tenantSelect)),
    landlordNote,
    h('fieldset', { class: 'permission-list' }, h('legend', {}, 'Permissions'), boxes.length ? boxes : h('p', { class: 'muted' }, 'No permissions are defined.')),
    h('label', { class: 'check' }, active, ' Active (an inactive role grants nothing)'),
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: cancel }, 'Cancel')),
    // The history is read with permission 35 (contract 18): offered only to whoever may open it.
    role && mayReadHistory ? h('ul', { class: 'links spaced', id: 'role-links' }, h('li', {}, historyLink('RoleRegistry', role.id, role.name))) : null,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const problems = [];
    if (!name.value.trim()) problems.push('Enter a name.');
    if (!role && !tenantSelect.value) problems.push('Choose a tenant.');
    if (problems.length > 0) {
      clear(messages).append(notice('error', problems));
      return focusOn(messages.firstChild);
    }
    const chosen = [...form.querySelectorAll('input[name="permission"]:checked')].map((b) => Number(/** @type {HTMLInputElement} */ (b).value));
    /** @type {{ name: string, permissions: number[], active: boolean, tenantRegistryId?: number }} */
    const body = { name: name.value.trim(), permissions: chosen, active: active.checked };
    if (role && role.active !== false && !active.checked) {
      const ok = await confirmDialog({
        title: `Deactivate ${role.name}?`,
        message: 'Its users keep signing in but lose every permission the role grants, at once.',
        confirmLabel: 'Deactivate',
        danger: true,
      });
      if (!ok) return;
    }
    if (!role) body.tenantRegistryId = Number(tenantSelect.value);
    /** @type {Role | undefined} */
    let saved;
    const send = async () => (saved = (role ? await api('PUT', `/api/RoleRegistry/${role.id}`, body) : await api('POST', '/api/RoleRegistry', body)).json);
    if (!(await act(save, messages, send, { focusError: true })) || !saved) return;
    const json = saved;
    await load();
    showForm(state.roles.find((r) => r.id === json.id) ?? json, { message: role ? 'The role is saved.' : `Role ${json.name} created.`, focus: true });
  });
  view.showDetail(form);
  if (!role) name.focus();
  else if (focus) focusOn(byId('role-title'));
}

function cancel() {
  state.selectedId = null;
  renderList();
  view.showPlaceholder();
}

await load();
const wantedRole = Number(new URLSearchParams(location.search).get('role'));
const preselect = state.roles.find((r) => r.id === wantedRole);
if (preselect) showForm(preselect);
else view.showPlaceholder();
document.body.dataset.ready = 'true';
