// The frame of every page: navigation limited to what the signed-in user may open, the user's name,
// and a countdown of the session read from the authentication-expiry cookie.
import { api } from './api.js';
import { byId, clear, h } from './dom.js';

const SECURITY_USER = 35;

/** The navigation, grouped as the original Administration menu. */
export const MENU = [
  { section: null, items: [{ path: '/', label: 'Home' }] },
  {
    section: 'Security',
    may: (s) => s.landlord || s.permissions.includes(SECURITY_USER),
    items: [
      { path: '/Administration/Security/Users', label: 'Users' },
      { path: '/Administration/Security/UserLogin', label: 'User Login' },
      { path: '/Administration/Security/UserLogout', label: 'User Logout' },
    ],
  },
  {
    section: 'Performance',
    may: (s) => s.landlord,
    items: [
      { path: '/Administration/Performance/ArchiverStagePerformanceCounter', label: 'Archiver Stage Performance Counter' },
      { path: '/Administration/Performance/ArchiverWarning', label: 'Archiver Warning' },
      { path: '/Administration/Performance/CaseCreationStagePerformanceCounter', label: 'Case Creation Stage Performance Counter' },
      { path: '/Administration/Performance/CaseCreationWarning', label: 'Case Creation Warning' },
      { path: '/Administration/Performance/CaptureQueueHealth', label: 'Capture Queue Health' },
    ],
  },
  {
    section: 'Logs',
    may: (s) => s.landlord,
    items: [{ path: '/Administration/Logs/ModelInvokeWarning', label: 'Model Invoke Warning' }],
  },
  {
    section: 'Account',
    items: [
      { path: '/Account/ChangePassword', label: 'Change password' },
      { path: '/Account/Logout', label: 'Sign out' },
    ],
  },
];

/** The menu sections this session may open. */
export function allowedMenu(session) {
  return MENU.filter((group) => !group.may || group.may(session));
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
    element.replaceChildren('Session expired · ', h('a', { href: `/Account/Login?returnUrl=${encodeURIComponent(location.pathname)}` }, 'Sign in'));
    return false;
  }
  const total = Math.floor(ms / 1000);
  const text = `${Math.floor(total / 60)}:${String(total % 60).padStart(2, '0')}`;
  element.classList.toggle('warning', total < 120);
  element.title = `The session ends at ${new Date(expiry).toLocaleTimeString()} unless you use the page again.`;
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
  for (const group of allowedMenu(session)) {
    const list = h(
      'ul',
      {},
      group.items.map((item) =>
        h('li', {}, h('a', { href: item.path, class: item.path.toLowerCase() === here ? 'active' : null, 'aria-current': item.path.toLowerCase() === here ? 'page' : null }, item.label)),
      ),
    );
    nav.append(h('div', { class: 'nav-group' }, group.section ? h('div', { class: 'nav-section' }, group.section) : null, list));
  }
}

function renderSession(session) {
  const countdown = h('span', { id: 'countdown', class: 'countdown', 'aria-live': 'off' });
  clear(byId('session')).append(
    h('span', { class: 'user', id: 'current-user' }, session.userName),
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
  clear(byId('nav'));
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
