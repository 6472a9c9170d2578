// Administration > Security > Roles (permission ReadWriteSecurityRole): the roles of the tenants the
// caller administers, each with the permissions it grants. A landlord picks the tenant of a new role;
// anyone else makes roles in their own tenant and can grant only what they hold themselves (the API
// refuses the rest). What each permission lets a user do is the server's note (codes.js).
import { api, problemLines } from './api.js';
import { codeNote } from './codes.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { content, startPage } from './layout.js';

const session = await startPage();
const root = content();

const listMessages = h('div', { class: 'messages' });
const listHolder = h('div', { id: 'roles-list' });
const detail = h('div', { class: 'role-detail', id: 'role-detail' });
const newButton = h('button', { type: 'button', class: 'primary', id: 'new-role', onclick: () => showForm(null) }, 'New role');
const tenantFilter = h('select', { id: 'tenant-filter', name: 'tenant' }, h('option', { value: '' }, 'All tenants'));
tenantFilter.addEventListener('change', () => {
  const q = tenantFilter.value ? `?tenant=${tenantFilter.value}` : '';
  history.replaceState(null, '', `${location.pathname}${q}`);
  renderList();
});
root.append(
  h(
    'div',
    { class: 'users-layout' },
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Roles'), newButton),
      h('p', { class: 'hint' }, 'A role is a set of permissions within one tenant. Give each user the role with the least it needs.'),
      session.landlord ? field('Tenant', tenantFilter) : null,
      listMessages,
      listHolder,
    ),
    detail,
  ),
);

let roles = [];
let tenants = [];
let permissions = [];
let selectedId = null;

const tenantOf = (id) => tenants.find((t) => t.id === id);
const permissionName = (id) => permissions.find((p) => p.id === id)?.name ?? `Permission ${id}`;

function placeholder() {
  clear(detail).append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, 'Select a role to see and change its permissions.')));
}

async function load() {
  try {
    const [r, p] = await Promise.all([api('GET', '/api/RoleRegistry'), api('GET', '/api/PermissionSpecification')]);
    roles = Array.isArray(r.json) ? r.json : [];
    permissions = Array.isArray(p.json) ? p.json : [];
    if (session.landlord) {
      const t = await api('GET', '/api/TenantRegistry');
      tenants = Array.isArray(t.json) ? t.json : [];
    } else {
      tenants = [{ id: session.tenantRegistryId, name: session.tenantName, landlord: false, active: true }];
    }
    clear(listMessages);
  } catch (error) {
    clear(listMessages).append(notice('error', problemLines(error)));
  }
  const chosen = tenantFilter.value || new URLSearchParams(location.search).get('tenant') || '';
  clear(tenantFilter).append(
    h('option', { value: '' }, 'All tenants'),
    ...[...tenants].sort((a, b) => String(a.name).localeCompare(String(b.name))).map((t) => h('option', { value: String(t.id), selected: String(t.id) === chosen }, t.name)),
  );
  renderList();
}

function renderList() {
  const only = Number(tenantFilter.value) || null;
  const groups = new Map();
  for (const role of roles) {
    if (only && role.tenantRegistryId !== only) continue;
    if (!groups.has(role.tenantRegistryId)) groups.set(role.tenantRegistryId, []);
    groups.get(role.tenantRegistryId).push(role);
  }
  const ordered = [...groups].sort(([a], [b]) => String(tenantOf(a)?.name ?? roles.find((r) => r.tenantRegistryId === a)?.tenantName).localeCompare(String(tenantOf(b)?.name ?? roles.find((r) => r.tenantRegistryId === b)?.tenantName)));
  clear(listHolder);
  if (ordered.length === 0) listHolder.append(h('p', { class: 'muted' }, only ? 'This tenant has no roles yet.' : 'No roles yet.'));
  for (const [tenantId, list] of ordered) {
    const tenantName = list[0].tenantName;
    listHolder.append(
      h('h3', { class: 'group-title' }, tenantName, tenantOf(tenantId)?.landlord ? h('span', { class: 'badge badge-warn', title: 'Users of the landlord tenant hold every permission, whatever their role.' }, ' Landlord') : null),
      h(
        'div',
        { class: 'table-holder' },
        h(
          'table',
          { class: 'grid selectable roles', 'data-tenant': tenantName },
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Role'), h('th', { scope: 'col' }, 'Permissions'))),
          h(
            'tbody',
            {},
            list
              .sort((a, b) => String(a.name).localeCompare(String(b.name)))
              .map((role) =>
                h(
                  'tr',
                  { class: role.id === selectedId ? 'selected' : null, 'data-role': role.name, onclick: () => showForm(role) },
                  h(
                    'td',
                    {},
                    h('a', { class: 'user-link', href: `?role=${role.id}`, onclick: (e) => (e.preventDefault(), e.stopPropagation(), showForm(role, { focus: true })) }, role.name),
                    role.active === false ? h('div', {}, h('span', { class: 'badge badge-muted' }, 'Inactive')) : null,
                  ),
                  h('td', {}, role.permissions.length ? role.permissions.map(permissionName).join(', ') : h('span', { class: 'muted' }, 'None')),
                ),
              ),
          ),
        ),
      ),
    );
  }
}

/** The form of a new role (role null) or of an existing one. */
function showForm(role, { message, focus = false } = {}) {
  selectedId = role?.id ?? null;
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
    [...tenants]
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
  const boxes = permissions.map((permission) => {
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
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: () => (selectedId = null, renderList(), placeholder()) }, 'Cancel')),
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
    const chosen = [...form.querySelectorAll('input[name="permission"]:checked')].map((b) => Number(b.value));
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
    save.disabled = true;
    clear(messages);
    try {
      const { json } = role ? await api('PUT', `/api/RoleRegistry/${role.id}`, body) : await api('POST', '/api/RoleRegistry', body);
      await load();
      showForm(roles.find((r) => r.id === json.id) ?? json, { message: role ? 'The role is saved.' : `Role ${json.name} created.`, focus: true });
    } catch (error) {
      messages.append(notice('error', problemLines(error)));
      focusOn(messages.firstChild);
    } finally {
      save.disabled = false;
    }
  });
  clear(detail).append(form);
  if (!role) name.focus();
  else if (focus) focusOn(byId('role-title'));
}

await load();
const wantedRole = Number(new URLSearchParams(location.search).get('role'));
const preselect = roles.find((r) => r.id === wantedRole);
if (preselect) showForm(preselect);
else placeholder();
document.body.dataset.ready = 'true';
