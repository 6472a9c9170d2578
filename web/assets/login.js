// /Account/Login: username and password (with the forced password change and the passcode step),
// Negotiate in the background, and the message after a failed OAuth return.
import { api, ApiError, problemLines, safeReturnUrl } from './api.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { brokenRules, passwordProtector, rulesChecklist } from './password.js';

const GENERIC_FAILURE = 'Sign-in failed. Check your user name and password and try again. If it keeps failing, ask an administrator.';
const THROTTLED = 'Too many failed sign-ins from your address. Wait a few minutes, then try again.';
const OAUTH_FAILURE = 'Sign-in through your identity provider did not succeed. Try again, or ask an administrator.';

const root = clear(byId('content'));
const card = h('section', { class: 'card login-card' });
root.append(card);
const messages = h('div', { class: 'messages', id: 'login-messages' });

/**
 * Shows a message; an error takes the keyboard focus, so a screen reader and a keyboard user land on it.
 * @param {'info' | 'error'} kind @param {string | string[]} lines @param {string} testid
 */
function say(kind, lines, testid) {
  const box = notice(kind, lines, { testid });
  clear(messages).append(box);
  if (kind === 'error') focusOn(box);
}

/**
 * Why the browser came here without its session (the service or the page says so in `session=`).
 * @type {Record<string, string | undefined>}
 */
const SESSION_MESSAGES = {
  ended:
    'Your session was ended: you signed out in another window, your password was changed, or an administrator ended your sessions. Sign in again to continue.',
  expired: 'Your session expired. Sign in again to continue.',
};

function done() {
  location.assign(safeReturnUrl());
}

async function schemes() {
  try {
    return (await api('GET', '/api/Authentication/Schemes', undefined, { on401: 'throw' })).json;
  } catch {
    return { password: true, oauth: false, negotiate: false, mfa: false };
  }
}

// ---- the form ---------------------------------------------------------------------------------

const userName = h('input', { name: 'userName', autocomplete: 'username', required: true, maxlength: 256, autofocus: true });
const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password' });
const newPassword = h('input', { name: 'newPassword', type: 'password', autocomplete: 'new-password' });
const repeatNewPassword = h('input', { name: 'repeatNewPassword', type: 'password', autocomplete: 'new-password' });
const passcode = h('input', { name: 'mfa', autocomplete: 'one-time-code', inputmode: 'numeric', maxlength: 64 });
const submit = h('button', { type: 'submit', class: 'primary wide' }, 'Sign in');

const credentials = h('div', { class: 'step', id: 'step-credentials' }, field('User name', userName), field('Password', password));
const change = h(
  'div',
  { class: 'step', id: 'step-change', hidden: true },
  h('p', { class: 'lead' }, 'Choose a new password to continue: this is the first sign-in, the password was reset, or it has expired.'),
  field('New password', newPassword),
  field('Repeat new password', repeatNewPassword),
  rulesChecklist(newPassword),
);
const mfaStep = h(
  'div',
  { class: 'step', id: 'step-mfa', hidden: true },
  h('p', { class: 'lead' }, 'Enter the one-time passcode from your token.'),
  field('Passcode', passcode),
);
const form = h('form', { id: 'login-form', novalidate: true, hidden: true }, credentials, change, mfaStep, submit);

card.append(h('p', { class: 'muted' }, 'Sign in to continue.'), messages, form);

/** @typedef {'credentials' | 'change' | 'mfa'} Stage */
/** @typedef {{ userName: string, password: string, newPassword?: string, repeatNewPassword?: string, mfa?: string }} SignInBody */

/** @type {Stage} */
let stage = 'credentials';
/** The prepared body of the last attempt, re-posted with `mfa` for the passcode step. @type {SignInBody | null} */
let pending = null;
/** With Negotiate, the passcode goes to ByNegotiateMfa instead. */
let negotiateMfa = false;

/** @param {Stage} next */
function show(next) {
  stage = next;
  credentials.hidden = next === 'mfa';
  change.hidden = next !== 'change';
  mfaStep.hidden = next !== 'mfa';
  userName.readOnly = next !== 'credentials';
  submit.textContent = next === 'change' ? 'Change password and sign in' : next === 'mfa' ? 'Verify' : 'Sign in';
  form.hidden = false;
  (next === 'mfa' ? passcode : next === 'change' ? newPassword : userName.value ? password : userName).focus();
}

async function prepare() {
  const name = userName.value.trim();
  const protector = await passwordProtector(name);
  /** @type {SignInBody} */
  const body = { userName: name, password: await protector.protect(password.value) };
  if (stage === 'change') {
    body.newPassword = await protector.protect(newPassword.value);
    body.repeatNewPassword = await protector.protect(repeatNewPassword.value);
  }
  return body;
}

function validate() {
  if (stage === 'mfa') return passcode.value.trim() ? [] : ['Enter the passcode.'];
  const problems = [];
  if (!userName.value.trim()) problems.push('Enter your user name.');
  if (!password.value) problems.push('Enter your password.');
  if (stage === 'change') {
    problems.push(...brokenRules(newPassword.value));
    if (newPassword.value !== repeatNewPassword.value) problems.push('The new passwords do not match.');
  }
  return problems;
}

async function attempt() {
  if (stage === 'mfa' && negotiateMfa) {
    const res = await api('POST', '/api/Authentication/ByNegotiateMfa', { mfa: passcode.value.trim() }, { on401: 'throw', accept: [401, 429] });
    if (res.status === 200) return done();
    if (res.status === 429) return say('error', THROTTLED, 'login-error');
    passcode.value = '';
    return say('error', GENERIC_FAILURE, 'login-error');
  }
  // The passcode step is reached only through a 202 to `pending`, so it is set there.
  const body = stage === 'mfa' ? { .../** @type {SignInBody} */ (pending), mfa: passcode.value.trim() } : await prepare();
  const res = await api('POST', '/api/Authentication/ByUserNamePassword', body, { on401: 'throw', accept: [202, 400, 401, 403, 404, 429] });
  if (res.status === 200) return done();
  // Past SignInThrottle (contract 13): about the address, not the account, so it may be said.
  if (res.status === 429) return say('error', THROTTLED, 'login-error');
  if (res.status === 202) {
    pending = body;
    clear(messages);
    return show('mfa');
  }
  if (res.status === 403 && res.json?.code === 'PasswordChangeRequired') {
    say('info', 'Your password must be changed before you can sign in.', 'password-change-required');
    return show('change');
  }
  if (res.status === 400) return say('error', problemLines(new ApiError(400, res.json)), 'login-error');
  // 401 and everything else: one message, whatever the cause.
  if (stage === 'mfa') {
    passcode.value = '';
    pending = null;
    show('credentials');
  }
  password.value = '';
  say('error', GENERIC_FAILURE, 'login-error');
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const problems = validate();
  if (problems.length > 0) return say('error', problems, 'login-error');
  submit.disabled = true;
  try {
    await attempt();
  } catch (error) {
    say('error', error instanceof ApiError ? GENERIC_FAILURE : problemLines(error), 'login-error');
  } finally {
    submit.disabled = false;
  }
});

// ---- the schemes -------------------------------------------------------------------------------

async function negotiate() {
  const waiting = h('p', { class: 'muted', id: 'negotiate-wait' }, 'Signing you in with your Windows account…');
  card.append(waiting);
  try {
    const res = await api('GET', '/api/Authentication/ByNegotiate', undefined, { on401: 'throw', accept: [202, 401] });
    if (res.status === 200) return done();
    if (res.status === 202) {
      negotiateMfa = true;
      return show('mfa');
    }
  } catch {
    // fall through to the form
  } finally {
    waiting.remove();
  }
  show('credentials');
}

const params = new URLSearchParams(location.search);
const available = await schemes();
if (params.has('error')) say('error', OAUTH_FAILURE, 'login-error');
else if (SESSION_MESSAGES[params.get('session') ?? '']) say('info', SESSION_MESSAGES[params.get('session') ?? ''] ?? '', 'session-ended');
if (available.oauth) {
  const target = `/api/Authentication/OAuth/Login?returnUrl=${encodeURIComponent(safeReturnUrl())}`;
  card.append(h('a', { class: 'button primary wide', href: target, id: 'oauth-login' }, 'Sign in with your identity provider'));
} else if (available.negotiate) {
  await negotiate();
} else {
  show('credentials');
}
document.body.dataset.ready = 'true';
