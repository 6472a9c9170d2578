// Administration > Security > Tenants (landlord only): the tenants, a new one, rename, deactivate or
// activate. A tenant's roles and users are one link away, on the Roles and Users pages.
import { api, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { content, startPage } from './layout.js';

await startPage();
const root = content();

const listMessages = h('div', { class: 'messages' });
const listHolder = h('div', { class: 'table-holder' });
const detail = h('div', { class: 'tenant-detail', id: 'tenant-detail' });
const newButton = h('button', { type: 'button', class: 'primary', id: 'new-tenant', onclick: () => showCreate() }, 'New tenant');
root.append(
  h(
    'div',
    { class: 'users-layout' },
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Tenants'), newButton),
      h('p', { class: 'hint' }, 'Each bank or business unit is a tenant: its administrators see only its own users, roles and sign-in history.'),
      listMessages,
      listHolder,
    ),
    detail,
  ),
);

let tenants = [];
let selectedId = null;

function placeholder() {
  clear(detail).append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, 'Select a tenant to rename it, deactivate it, or go to its roles and users.')));
}

async function loadTenants() {
  try {
    const { json } = await api('GET', '/api/TenantRegistry');
    tenants = Array.isArray(json) ? json : [];
    clear(listMessages);
  } catch (error) {
    tenants = [];
    clear(listMessages).append(notice('error', problemLines(error)));
  }
  renderList();
}

function badges(tenant) {
  return [
    tenant.landlord ? h('span', { class: 'badge badge-warn', title: 'Its users hold every permission and see every tenant.' }, 'Landlord') : null,
    h('span', { class: ['badge', tenant.active ? 'badge-good' : 'badge-muted'] }, tenant.active ? 'Active' : 'Inactive'),
  ];
}

function renderList() {
  const shown = [...tenants].sort((a, b) => Number(b.landlord) - Number(a.landlord) || String(a.name).localeCompare(String(b.name)));
  clear(listHolder).append(
    h(
      'table',
      { class: 'grid selectable', id: 'tenants' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Status'))),
      h(
        'tbody',
        {},
        shown.length === 0
          ? h('tr', {}, h('td', { colspan: 2, class: 'empty' }, 'No tenants.'))
          : shown.map((tenant) =>
              h(
                'tr',
                { class: tenant.id === selectedId ? 'selected' : null, 'data-tenant': tenant.name, onclick: () => select(tenant.id) },
                h('td', {}, h('a', { class: 'user-link', href: `?tenant=${tenant.id}`, onclick: (e) => (e.preventDefault(), e.stopPropagation(), select(tenant.id)) }, tenant.name)),
                h('td', {}, badges(tenant)),
              ),
            ),
      ),
    ),
  );
}

/** Runs an action with its button disabled and shows the outcome in `messages`. */
async function act(button, messages, action) {
  button.disabled = true;
  clear(messages);
  try {
    return await action();
  } catch (error) {
    messages.append(notice('error', problemLines(error)));
    focusOn(messages.firstChild);
    return null;
  } finally {
    button.disabled = false;
  }
}

function showCreate() {
  selectedId = null;
  renderList();
  const messages = h('div', { class: 'messages' });
  const name = h('input', { id: 'new-tenant-name', maxlength: 256, required: true, autocomplete: 'off' });
  const active = h('input', { type: 'checkbox', id: 'new-tenant-active', checked: true });
  const save = h('button', { type: 'submit', class: 'primary', id: 'create-tenant' }, 'Create tenant');
  const form = h(
    'form',
    { class: 'card', novalidate: true, 'aria-labelledby': 'new-tenant-title' },
    h('h2', { id: 'new-tenant-title' }, 'New tenant'),
    messages,
    field('Name', name, 'Unique; for example the bank or business unit.'),
    h('label', { class: 'check' }, active, ' Active (its users can sign in)'),
    h('p', { class: 'hint' }, 'Next, give the tenant a role on the Roles page, then users on the Users page. A new tenant is never a landlord.'),
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: placeholder }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!name.value.trim()) {
      clear(messages).append(notice('error', 'Enter a name.'));
      return focusOn(messages.firstChild);
    }
    const created = await act(save, messages, async () => (await api('POST', '/api/TenantRegistry', { name: name.value.trim(), active: active.checked })).json);
    if (created) {
      await loadTenants();
      select(created.id, `Tenant ${created.name} created.`);
    }
  });
  clear(detail).append(form);
  name.focus();
}

function select(id, message) {
  selectedId = id;
  renderList();
  const tenant = tenants.find((t) => t.id === id);
  if (!tenant) return placeholder();
  history.replaceState(null, '', `?tenant=${tenant.id}`);
  const messages = h('div', { class: 'messages', id: 'tenant-messages' });
  if (message) messages.append(notice('success', message));
  const name = h('input', { id: 'edit-tenant-name', maxlength: 256, value: tenant.name, autocomplete: 'off' });
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-tenant' }, 'Save');
  const toggle = h('button', { type: 'button', id: 'toggle-tenant', class: tenant.active ? 'danger' : null, hidden: tenant.landlord }, tenant.active ? 'Deactivate' : 'Activate');
  toggle.addEventListener('click', async () => {
    if (
      tenant.active &&
      !(await confirmDialog({
        title: `Deactivate ${tenant.name}?`,
        message: 'None of its users can sign in or use a session until it is activated again. Nothing is deleted.',
        confirmLabel: 'Deactivate',
        danger: true,
      }))
    )
      return;
    const updated = await act(toggle, messages, async () => (await api('PUT', `/api/TenantRegistry/${tenant.id}`, { active: !tenant.active })).json);
    if (updated) {
      await loadTenants();
      select(tenant.id, updated.active ? `${updated.name} is active again.` : `${updated.name} is deactivated.`);
    }
  });
  const form = h(
    'form',
    { class: 'card', novalidate: true },
    h('div', { class: 'card-head' }, h('h2', { id: 'tenant-name', tabindex: '-1' }, tenant.name), h('div', {}, badges(tenant))),
    messages,
    field('Name', name),
    tenant.landlord ? h('p', { class: 'hint' }, 'The landlord tenant cannot be deactivated: its administrators run the service.') : null,
    h('div', { class: 'actions' }, save, toggle),
    h(
      'ul',
      { class: 'links spaced', id: 'tenant-links' },
      h('li', {}, h('a', { href: `/Administration/Security/Roles?tenant=${tenant.id}` }, `Roles of ${tenant.name}`)),
      h('li', {}, h('a', { href: `/Administration/Security/Users?tenant=${encodeURIComponent(tenant.name)}` }, `Users of ${tenant.name}`)),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!name.value.trim()) {
      clear(messages).append(notice('error', 'Enter a name.'));
      return focusOn(messages.firstChild);
    }
    const updated = await act(save, messages, async () => (await api('PUT', `/api/TenantRegistry/${tenant.id}`, { name: name.value.trim() })).json);
    if (updated) {
      await loadTenants();
      select(tenant.id, 'The name is saved.');
    }
  });
  clear(detail).append(form);
  if (message !== undefined || document.activeElement?.closest('#tenants')) focusOn(byId('tenant-name'));
}

await loadTenants();
const wanted = Number(new URLSearchParams(location.search).get('tenant'));
if (tenants.some((t) => t.id === wanted)) select(wanted);
else placeholder();
document.body.dataset.ready = 'true';
