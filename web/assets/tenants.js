// Administration > Security > Tenants (landlord only): the tenants, a new one, rename, deactivate or
// activate. A tenant's roles and users are one link away, on the Roles and Users pages.
import { api } from './api.js';
import { confirmDialog } from './dialog.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { content, startPage } from './layout.js';
import { act, historyLink, masterDetail, selectLink, selectableRow, selectableTable } from './master-detail.js';

/** @typedef {import('./api-types.js').Tenant} Tenant */

await startPage();
const root = content();

/** What the page shows: the tenants read, and the one selected. */
const state = {
  /** @type {Tenant[]} */
  tenants: [],
  /** @type {number | null} */
  selectedId: null,
};

const view = masterDetail({
  head: [
    h('div', { class: 'card-head' }, h('h2', {}, 'Tenants'), h('button', { type: 'button', class: 'primary', id: 'new-tenant', onclick: () => showCreate() }, 'New tenant')),
    h('p', { class: 'hint' }, 'Each bank or business unit is a tenant: its administrators see only its own users, roles and sign-in history.'),
  ],
  detailClass: 'tenant-detail',
  detailId: 'tenant-detail',
  placeholder: 'Select a tenant to rename it, deactivate it, or go to its roles and users.',
});
root.append(view.element);

async function loadTenants() {
  try {
    const { json } = await api('GET', '/api/TenantRegistry');
    state.tenants = Array.isArray(json) ? json : [];
    view.listOutcome();
  } catch (error) {
    state.tenants = [];
    view.listOutcome(error);
  }
  renderList();
}

/** @param {Tenant} tenant */
function badges(tenant) {
  return [
    tenant.landlord ? h('span', { class: 'badge badge-warn', title: 'Its users hold every permission and see every tenant.' }, 'Landlord') : null,
    h('span', { class: ['badge', tenant.active ? 'badge-good' : 'badge-muted'] }, tenant.active ? 'Active' : 'Inactive'),
  ];
}

function renderList() {
  const shown = [...state.tenants].sort((a, b) => Number(b.landlord) - Number(a.landlord) || String(a.name).localeCompare(String(b.name)));
  const rows = shown.map((tenant) =>
    selectableRow(
      { selected: tenant.id === state.selectedId, onSelect: () => select(tenant.id), attributes: { 'data-tenant': tenant.name } },
      h('td', {}, selectLink(tenant.name, `?tenant=${tenant.id}`, () => select(tenant.id))),
      h('td', {}, badges(tenant)),
    ),
  );
  clear(view.listHolder).append(selectableTable({ class: 'grid selectable', id: 'tenants' }, ['Name', 'Status'], rows, 'No tenants.'));
}

/** Whether a name is given; if not, says so in `messages`. @param {HTMLInputElement} name @param {HTMLElement} messages */
function nameGiven(name, messages) {
  if (name.value.trim()) return true;
  clear(messages).append(notice('error', 'Enter a name.'));
  focusOn(messages.firstChild);
  return false;
}

function showCreate() {
  state.selectedId = null;
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
    h('div', { class: 'actions' }, save, h('button', { type: 'button', onclick: view.showPlaceholder }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!nameGiven(name, messages)) return;
    /** @type {Tenant | undefined} */
    let created;
    const create = async () => (created = (await api('POST', '/api/TenantRegistry', { name: name.value.trim(), active: active.checked })).json);
    if ((await act(save, messages, create, { focusError: true })) && created) {
      await loadTenants();
      select(created.id, `Tenant ${created.name} created.`);
    }
  });
  view.showDetail(form);
  name.focus();
}

/** @param {number} id @param {string} [message] */
function select(id, message) {
  state.selectedId = id;
  renderList();
  const tenant = state.tenants.find((t) => t.id === id);
  if (!tenant) return view.showPlaceholder();
  history.replaceState(null, '', `?tenant=${tenant.id}`);
  const messages = h('div', { class: 'messages', id: 'tenant-messages' });
  if (message) messages.append(notice('success', message));
  const name = h('input', { id: 'edit-tenant-name', maxlength: 256, value: tenant.name, autocomplete: 'off' });
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-tenant' }, 'Save');
  /** Saves `change` and shows the tenant again with `said(updated)`. @param {HTMLButtonElement} button @param {Partial<Tenant>} change @param {(updated: Tenant) => string} said */
  const update = async (button, change, said) => {
    /** @type {Tenant | undefined} */
    let updated;
    const put = async () => (updated = (await api('PUT', `/api/TenantRegistry/${tenant.id}`, change)).json);
    if ((await act(button, messages, put, { focusError: true })) && updated) {
      await loadTenants();
      select(tenant.id, said(updated));
    }
  };
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
    await update(toggle, { active: !tenant.active }, (updated) => (updated.active ? `${updated.name} is active again.` : `${updated.name} is deactivated.`));
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
      h('li', {}, historyLink('TenantRegistry', tenant.id, tenant.name)),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (nameGiven(name, messages)) await update(save, { name: name.value.trim() }, () => 'The name is saved.');
  });
  view.showDetail(form);
  if (message !== undefined || document.activeElement?.closest('#tenants')) focusOn(byId('tenant-name'));
}

await loadTenants();
const wanted = Number(new URLSearchParams(location.search).get('tenant'));
if (state.tenants.some((t) => t.id === wanted)) select(wanted);
else view.showPlaceholder();
document.body.dataset.ready = 'true';
