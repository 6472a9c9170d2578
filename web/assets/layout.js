// @ts-check
// The frame of every page: navigation limited to what the signed-in user may open, the user's name,
// and a countdown of the session read from the authentication-expiry cookie.
import { api } from './api.js';
import { byId, clear, formatDate, h, localZoneId, setZoneMode, zoneMode, zoneName } from './dom.js';
import { MENU as SERVED_MENU } from './page-tables.js';

/**
 * What the session read tells the frame about the signed-in user.
 * @typedef {{ userName: string, tenantName: string, landlord: boolean, permissions: number[] }} Session
 */
/** @typedef {{ path: string, label: string, may?: (session: Session) => boolean }} MenuItem */
/** @typedef {{ section: string | null, items: MenuItem[] }} MenuGroup */

/**
 * Who may open an item: the page's own access rule (src/web/pages.ts), which the server checks again.
 * @param {import('../../src/web/pages').PageAccess} access
 * @returns {((session: Session) => boolean) | undefined}
 */
function mayOpen(access) {
  if (access === 'landlord') return (s) => s.landlord;
  if (typeof access === 'object') return (s) => s.landlord || s.permissions.includes(access.permission);
  return undefined;
}

/**
 * The navigation, grouped as the original Administration menu: the server's (/assets/page-tables.js,
 * from each page's menu place, decision 0028), each item saying who may open it, so a user sees only
 * what works.
 * @type {MenuGroup[]}
 */
export const MENU = SERVED_MENU.map((group) => ({
  section: group.section,
  items: group.items.map(({ path, label, access }) => {
    const may = mayOpen(access);
    return may ? { path, label, may } : { path, label };
  }),
}));

/**
 * The menu sections this session may open, each with only the items it may open; empty sections dropped.
 * @param {Session} session
 * @returns {MenuGroup[]}
 */
export function allowedMenu(session) {
  return MENU.map((group) => ({ ...group, items: group.items.filter((item) => !item.may || item.may(session)) })).filter(
    (group) => group.items.length > 0,
  );
}

/**
 * @param {string} name
 * @returns {string | null}
 */
function readCookie(name) {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

/** @type {ReturnType<typeof setInterval> | null} */
let countdownTimer = null;

/**
 * @param {HTMLElement} element
 * @returns {boolean} false once the session has expired
 */
function renderCountdown(element) {
  const expiry = readCookie('authentication-expiry');
  const ms = expiry ? new Date(expiry).getTime() - Date.now() : NaN;
  if (!Number.isFinite(ms) || ms <= 0) {
    element.classList.add('expired');
    element.replaceChildren('Session expired · ', h('a', { href: `/Account/Login?returnUrl=${encodeURIComponent(location.pathname + location.search)}&session=expired` }, 'Sign in'));
    return false;
  }
  const total = Math.floor(ms / 1000);
  const text = `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
  element.classList.toggle('warning', total < 120);
  element.title = `The session ends at ${formatDate(expiry)} unless you use the page again.`;
  element.textContent = `Session ${text}`;
  return true;
}

/** @param {HTMLElement} element */
function startCountdown(element) {
  if (countdownTimer) clearInterval(countdownTimer);
  renderCountdown(element);
  countdownTimer = setInterval(() => {
    if (!renderCountdown(element)) {
      if (countdownTimer) clearInterval(countdownTimer);
      countdownTimer = null;
    }
  }, 1000);
}

/** @param {Session} session */
function renderNav(session) {
  const nav = clear(byId('nav'));
  const here = location.pathname.toLowerCase();
  // On a narrow screen the menu is a panel opened from the header; it names who is signed in there,
  // since the header has no room for it.
  nav.append(h('div', { class: 'nav-who' }, h('span', { class: 'strong' }, session.userName), ' · ', session.tenantName), zoneSwitch());
  for (const group of allowedMenu(session)) {
    const list = h(
      'ul',
      {},
      group.items.map((item) => {
        const current = item.path.toLowerCase() === here;
        return h('li', {}, h('a', { href: item.path, class: current ? 'active' : null, 'aria-current': current ? 'page' : null }, item.label));
      }),
    );
    nav.append(h('div', { class: 'nav-group' }, group.section ? h('div', { class: 'nav-section' }, group.section) : null, list));
  }
  installMenuButton(nav);
}

/**
 * The choice between local time and UTC for every date on every page, kept in this browser. It sits
 * at the top of the menu (always in view beside the page on a wide screen, in the Menu panel on a
 * phone). Choosing reloads the page, so every date, input and chart follows at once; the grids keep
 * their filters in the address, so nothing chosen is lost.
 */
function zoneSwitch() {
  const mode = zoneMode();
  const local = zoneName(Date.now(), 'local');
  /** @type {(value: 'local' | 'utc', label: string, title: string) => HTMLElement} */
  const option = (value, label, title) =>
    h(
      'button',
      {
        type: 'button',
        id: `zone-${value}`,
        class: ['zone-option', mode === value ? 'active' : null],
        'aria-pressed': String(mode === value),
        title,
        onclick: () => {
          if (zoneMode() === value) return;
          setZoneMode(value);
          location.reload();
        },
      },
      label,
    );
  return h(
    'div',
    { class: 'zone-switch', role: 'group', 'aria-labelledby': 'zone-switch-label', 'data-zone': mode },
    h('div', { class: 'nav-section', id: 'zone-switch-label' }, 'Dates shown in'),
    h(
      'div',
      { class: 'zone-options' },
      option('local', `Local (${local})`, `This browser's time zone, ${localZoneId()}`),
      option('utc', 'UTC', 'Coordinated Universal Time, as the API and the CSV export give every date'),
    ),
  );
}

/**
 * The header's Menu button, shown by the stylesheet on narrow screens where the side navigation is
 * folded away: it opens the navigation as a panel (aria-expanded says whether it is open), Escape or
 * a second press closes it and gives the focus back to the button.
 */
/** @param {HTMLElement} nav */
function installMenuButton(nav) {
  byId('menu-button')?.remove();
  const button = h('button', { type: 'button', id: 'menu-button', class: 'menu-button', 'aria-expanded': 'false', 'aria-controls': 'nav' }, h('span', { class: 'menu-icon', 'aria-hidden': 'true' }), 'Menu');
  /** @type {(open: boolean, options?: { focus?: boolean }) => void} */
  const setOpen = (open, { focus } = {}) => {
    button.setAttribute('aria-expanded', String(open));
    nav.classList.toggle('open', open);
    document.body.classList.toggle('menu-open', open);
    if (open && focus) nav.querySelector('a')?.focus();
  };
  button.addEventListener('click', () => setOpen(button.getAttribute('aria-expanded') !== 'true', { focus: true }));
  nav.addEventListener('keydown', (/** @type {KeyboardEvent} */ event) => {
    if (event.key === 'Escape' && nav.classList.contains('open')) {
      setOpen(false);
      button.focus();
    }
  });
  // The panel closes when the focus or a click leaves it (Tab past its last link, a tap on the page).
  nav.addEventListener('focusout', (/** @type {FocusEvent} */ event) => {
    const to = /** @type {Node | null} */ (event.relatedTarget);
    if (nav.classList.contains('open') && !nav.contains(to) && to !== button && to !== null) setOpen(false);
  });
  document.addEventListener('click', (event) => {
    const target = /** @type {Node | null} */ (event.target);
    if (nav.classList.contains('open') && !nav.contains(target) && !button.contains(target)) setOpen(false);
  });
  // Widening the window past the narrow layout leaves no stale open panel behind.
  matchMedia('(min-width: 981px)').addEventListener('change', (event) => event.matches && setOpen(false));
  document.querySelector('.topbar')?.prepend(button);
}

/** @param {Session} session */
function renderSession(session) {
  const countdown = h('span', { id: 'countdown', class: 'countdown', 'aria-live': 'off' });
  clear(byId('session')).append(
    h('span', { class: 'user', id: 'current-user', title: `${session.userName} (${session.tenantName})` }, session.userName),
    h('span', { class: 'tenant' }, session.tenantName),
    countdown,
    h('a', { href: '/Account/Logout', class: 'signout' }, 'Sign out'),
  );
  startCountdown(countdown);
}

/** Removes the signed-in frame (after sign-out). */
export function showSignedOut() {
  if (countdownTimer) clearInterval(countdownTimer);
  countdownTimer = null;
  clear(byId('nav')).classList.remove('open');
  document.body.classList.remove('menu-open');
  byId('menu-button')?.remove();
  clear(byId('session'));
}

/**
 * Reads the session and draws the frame. `required` (default): a page that needs a session (the
 * server already redirected a browser without one; an API 401 here redirects too). `optional`: the
 * sign-out page and error pages, shown with or without a session.
 */
export async function startPage({ session: need = 'required' } = {}) {
  try {
    const { json } = await api('GET', '/api/Authentication/Session', undefined, { on401: need === 'required' ? 'redirect' : 'throw' });
    renderNav(json);
    renderSession(json);
    return json;
  } catch (error) {
    if (need === 'required') throw error;
    return null;
  }
}

/** The page's content element, emptied. */
export function content() {
  return clear(byId('content'));
}
