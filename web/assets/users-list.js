// The Users page's state and its list: who is shown (the filter over name, email, role and tenant),
// how a user's state reads as badges, and the table that selects one (users.js wires it up).
import { clear, h } from './dom.js';
import { selectLink, selectableRow, selectableTable } from './master-detail.js';

/** @typedef {import('./api-types.js').User} User */
/** @typedef {import('./api-types.js').Role} Role */
/** @typedef {import('./api-types.js').Session} Session */

/**
 * What the Users page shows, in one object: the users and the roles the caller may give (GET
 * /api/RoleRegistry/Assignable, each tenant's together), which tenants are the landlord (known to a
 * landlord caller only; others have one tenant), and the user selected.
 * @typedef {{ session: Session, users: User[], roles: Role[], landlordTenants: Set<number>, selectedId: number | null }} UsersState
 */

/**
 * What the list, the detail and the forms call back into (users.js): reload the users, select one,
 * show the placeholder, and the page's master/detail frame.
 * @typedef {{
 *   state: UsersState,
 *   view: import('./master-detail.js').MasterDetail,
 *   loadUsers: () => Promise<void>,
 *   renderList: () => void,
 *   select: (id: number, message?: string, options?: { focus?: boolean }) => Promise<void>,
 *   showPlaceholder: () => void,
 * }} UsersPage
 */

/** @param {UsersState} state @param {User} user */
export const roleName = (state, user) =>
  user.roleName ?? state.roles.find((r) => r.id === user.roleRegistryId)?.name ?? (user.roleRegistryId !== undefined ? `Role ${user.roleRegistryId}` : '');
/** @param {User} user */
export const isLocked = (user) => user.passwordLocked === true;
/** @param {User} user */
export const isActive = (user) => user.active !== false;

/** Active or Inactive, and Locked when it is. @param {User} user */
export function badges(user) {
  return [
    h('span', { class: ['badge', isActive(user) ? 'badge-good' : 'badge-muted'] }, isActive(user) ? 'Active' : 'Inactive'),
    isLocked(user) ? h('span', { class: 'badge badge-bad' }, 'Locked') : null,
  ];
}

/**
 * The filter box over the list; it starts from the address's `tenant` (the Tenants page links here
 * with it).
 * @param {() => void} onInput
 */
export function userFilter(onInput) {
  return h('input', {
    type: 'search',
    id: 'user-filter',
    placeholder: 'Filter by name, email, role or tenant',
    'aria-label': 'Filter users',
    value: new URLSearchParams(location.search).get('tenant') ?? '',
    oninput: onInput,
  });
}

/**
 * Draws the users matching `filter` into `holder`, by name.
 * @param {UsersState} state
 * @param {HTMLElement} holder
 * @param {string} filter
 * @param {(id: number) => void} onSelect
 */
export function renderUserList(state, holder, filter, onSelect) {
  const term = filter.trim().toLowerCase();
  const shown = state.users
    .filter((u) => !term || [u.name, u.email, roleName(state, u), u.tenantName].some((v) => String(v ?? '').toLowerCase().includes(term)))
    .sort((a, b) => String(a.name).localeCompare(String(b.name)));
  const rows = shown.map((user) =>
    selectableRow(
      { selected: user.id === state.selectedId, onSelect: () => onSelect(user.id), attributes: { 'data-user': user.name } },
      // The name is a link (Tab reaches it, Enter opens it, and it can be opened in a new tab).
      // Only an exceptional state is flagged here (inactive, locked); the detail shows every state.
      h(
        'td',
        {},
        selectLink(user.name, `?user=${encodeURIComponent(user.name)}`, () => onSelect(user.id), { current: user.id === state.selectedId }),
        user.email ? h('div', { class: 'muted small' }, user.email) : null,
        !isActive(user) || isLocked(user) ? h('div', {}, badges(user).filter((b) => b && !b.classList.contains('badge-good'))) : null,
      ),
      h('td', {}, roleName(state, user), user.tenantName ? h('div', { class: 'muted small' }, user.tenantName) : null),
    ),
  );
  clear(holder).append(selectableTable({ class: 'grid selectable', id: 'users' }, ['Name', 'Role'], rows, 'No users.'));
}
