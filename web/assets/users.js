// Administration > Security > Users: the registry (list, create, edit, deactivate, unlock, reset
// password, Revoke Sessions) and each user's API keys (generate, shown once; list; revoke). This file
// holds the page's state and wires its parts: users-list.js (the list), users-detail.js (one user),
// users-forms.js (role and password fields, New user), users-api-keys.js (the keys card).
import { api } from './api.js';
import { h } from './dom.js';
import { content, startPage } from './layout.js';
import { masterDetail } from './master-detail.js';
import { selectUser } from './users-detail.js';
import { showCreate } from './users-forms.js';
import { renderUserList, userFilter } from './users-list.js';

/** @typedef {import('./users-list.js').UsersState} UsersState */
/** @typedef {import('./users-list.js').UsersPage} UsersPage */

const session = await startPage();
const root = content();

/** @type {UsersState} */
const state = { session, users: [], roles: [], landlordTenants: new Set(), selectedId: null };

const filter = userFilter(() => renderList());
const view = masterDetail({
  listClass: 'users-list',
  head: [h('div', { class: 'card-head' }, h('h2', {}, 'Users'), h('button', { type: 'button', class: 'primary', id: 'new-user', onclick: () => showCreate(page) }, 'New user')), filter],
  detailClass: 'user-detail',
  detailId: 'user-detail',
  placeholder: 'Select a user to see their details, sessions and API keys.',
});
root.append(view.element);
view.showPlaceholder();

/** @type {UsersPage} */
const page = {
  state,
  view,
  loadUsers,
  renderList,
  select: (id, message, options) => selectUser(page, id, message, options),
  showPlaceholder: view.showPlaceholder,
};

function renderList() {
  renderUserList(state, view.listHolder, filter.value, (id) => void page.select(id, undefined, { focus: true }));
}

async function loadRoles() {
  try {
    const { json } = await api('GET', '/api/RoleRegistry/Assignable');
    state.roles = Array.isArray(json) ? json : [];
  } catch {
    state.roles = [];
  }
  if (session.landlord) {
    try {
      const { json } = await api('GET', '/api/TenantRegistry');
      for (const tenant of Array.isArray(json) ? json : []) if (tenant.landlord) state.landlordTenants.add(tenant.id);
    } catch {
      // the hint about landlord roles is then left out
    }
  }
}

async function loadUsers() {
  try {
    const { json } = await api('GET', '/api/UserRegistry');
    state.users = Array.isArray(json) ? json : [];
    view.listOutcome();
  } catch (error) {
    state.users = [];
    view.listOutcome(error);
  }
  renderList();
}

await loadRoles();
await loadUsers();
const wanted = new URLSearchParams(location.search).get('user');
const preselect = wanted ? state.users.find((u) => String(u.name).toLowerCase() === wanted.toLowerCase()) : null;
if (preselect) await page.select(preselect.id);
document.body.dataset.ready = 'true';
