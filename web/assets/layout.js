// The frame of every page: navigation limited to what the signed-in user may open, the user's name,
// and a countdown of the session read from the authentication-expiry cookie.
import { api } from './api.js';
import { codeId } from './codes.js';
import { byId, clear, formatDate, h, localZoneId, setZoneMode, zoneMode, zoneName } from './dom.js';

const SECURITY_ROLE = codeId('permissions', 'ReadWriteSecurityRole');
const SECURITY_USER = codeId('permissions', 'ReadWriteSecurityUser');
const landlord = (s) => s.landlord;
const holds = (permission) => (s) => s.landlord || s.permissions.includes(permission);

/**
 * The navigation, grouped as the original Administration menu. Each item says who may open it (the
 * same rule as the page's server-side check in src/web/pages.ts), so a user sees only what works.
 */
export const MENU = [
  { section: null, items: [{ path: '/', label: 'Home' }] },
  {
    section: 'Security',
    items: [
      { path: '/Administration/Security/Tenants', label: 'Tenants', may: landlord },
      { path: '/Administration/Security/Roles', label: 'Roles', may: holds(SECURITY_ROLE) },
      { path: '/Administration/Security/Users', label: 'Users', may: holds(SECURITY_USER) },
      { path: '/Administration/Security/UserLogin', label: 'User Login', may: holds(SECURITY_USER) },
      { path: '/Administration/Security/UserLogout', label: 'User Logout', may: holds(SECURITY_USER) },
      { path: '/Administration/Security/AuditIntegrity', label: 'Audit integrity', may: landlord },
    ],
  },
  {
    section: 'Performance',
    items: [
      { path: '/Administration/Performance/ArchiverStagePerformanceCounter', label: 'Archiver Stage Performance Counter', may: landlord },
      { path: '/Administration/Performance/ArchiverWarning', label: 'Archiver Warning', may: landlord },
      { path: '/Administration/Performance/CaseCreationStagePerformanceCounter', label: 'Case Creation Stage Performance Counter', may: landlord },
      { path: '/Administration/Performance/CaseCreationWarning', label: 'Case Creation Warning', may: landlord },
      { path: '/Administration/Performance/CaptureQueueHealth', label: 'Capture Queue Health', may: landlord },
      { path: '/Administration/Performance/OpenTelemetryMetric', label: 'OpenTelemetry Metric', may: landlord },
    ],
  },
  {
    section: 'Logs',
    items: [
      { path: '/Administration/Logs/ModelInvokeWarning', label: 'Model Invoke Warning', may: landlord },
      { path: '/Administration/Logs/RedisConnectionEvent', label: 'Redis Connection Event', may: landlord },
      { path: '/Administration/Logs/RedisSentinelEvent', label: 'Redis Sentinel Event', may: landlord },
    ],
  },
  {
    section: 'Account',
    items: [
      { path: '/Account/Sessions', label: 'Sessions' },
      { path: '/Account/Passkeys', label: 'Passkeys' },
      { path: '/Account/ChangePassword', label: 'Change password' },
      // Everyone signed in may open it; each operation still needs its own permission.
      { path: '/swagger/index.html', label: 'API explorer' },
      { path: '/Account/Logout', label: 'Sign out' },
    ],
  },
];

/** The menu sections this session may open, each with only the items it may open; empty sections dropped. */
export function allowedMenu(session) {
  return MENU.map((group) => ({ ...group, items: group.items.filter((item) => !item.may || item.may(session)) })).filter(
    (group) => group.items.length > 0,
  );
}

function readCookie(name) {
  for (const part of document.cookie.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return null;
}

let countdownTimer = null;

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

function startCountdown(element) {
  if (countdownTimer) clearInterval(countdownTimer);
  renderCountdown(element);
  countdownTimer = setInterval(() => {
    if (!renderCountdown(element)) {
      clearInterval(countdownTimer);
      countdownTimer = null;
    }
  }, 1000);
}

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
function installMenuButton(nav) {
  byId('menu-button')?.remove();
  const button = h('button', { type: 'button', id: 'menu-button', class: 'menu-button', 'aria-expanded': 'false', 'aria-controls': 'nav' }, h('span', { class: 'menu-icon', 'aria-hidden': 'true' }), 'Menu');
  const setOpen = (open, { focus } = {}) => {
    button.setAttribute('aria-expanded', String(open));
    nav.classList.toggle('open', open);
    document.body.classList.toggle('menu-open', open);
    if (open && focus) nav.querySelector('a')?.focus();
  };
  button.addEventListener('click', () => setOpen(button.getAttribute('aria-expanded') !== 'true', { focus: true }));
  nav.addEventListener('keydown', (event) => {
    if (event.key === 'Escape' && nav.classList.contains('open')) {
      setOpen(false);
      button.focus();
    }
  });
  // The panel closes when the focus or a click leaves it (Tab past its last link, a tap on the page).
  nav.addEventListener('focusout', (event) => {
    if (nav.classList.contains('open') && !nav.contains(event.relatedTarget) && event.relatedTarget !== button && event.relatedTarget !== null) setOpen(false);
  });
  document.addEventListener('click', (event) => {
    if (nav.classList.contains('open') && !nav.contains(event.target) && !button.contains(event.target)) setOpen(false);
  });
  // Widening the window past the narrow layout leaves no stale open panel behind.
  matchMedia('(min-width: 981px)').addEventListener('change', (event) => event.matches && setOpen(false));
  document.querySelector('.topbar').prepend(button);
}

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
