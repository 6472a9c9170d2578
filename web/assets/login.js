// /Account/Login: username and password (with the forced password change and the passcode step),
// Negotiate in the background, and the message after a failed OAuth return.
import { api, ApiError, problemLines, safeReturnUrl } from './api.js';
import { byId, clear, field, focusOn, h, notice } from './dom.js';
import { brokenRules, passwordProtector, rulesChecklist } from './password.js';
import { autofillSupported, cancelled, getPasskey, passkeysSupported } from './webauthn.js';

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

// "webauthn": the browser offers the user's passkeys in this field's autofill (conditional mediation).
const userName = h('input', { name: 'userName', autocomplete: 'username webauthn', required: true, maxlength: 256, autofocus: true });
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
const usePasskey = h('button', { type: 'button', class: 'primary wide', id: 'second-factor-passkey' }, 'Use your passkey');
const passkeyStep = h(
  'div',
  { class: 'step', id: 'step-passkey', hidden: true },
  h('p', { class: 'lead' }, 'Confirm it is you with your passkey.'),
  usePasskey,
  h('p', { class: 'muted', id: 'passkey-or-passcode', hidden: true }, 'Or enter the one-time passcode from your token below.'),
);
const form = h('form', { id: 'login-form', novalidate: true, hidden: true }, credentials, change, passkeyStep, mfaStep, submit);

card.append(h('p', { class: 'muted' }, 'Sign in to continue.'), messages, form);

/** @typedef {'credentials' | 'change' | 'mfa' | 'passkey'} Stage */
/** @typedef {import('./api-types.js').PasskeyPrompt} PasskeyPrompt */
/** @typedef {{ userName: string, password: string, newPassword?: string, repeatNewPassword?: string, mfa?: string }} SignInBody */

/** @type {Stage} */
let stage = 'credentials';
/** The prepared body of the last attempt, re-posted with `mfa` for the passcode step. @type {SignInBody | null} */
let pending = null;
/** With Negotiate, the passcode goes to ByNegotiateMfa instead. */
let negotiateMfa = false;
/**
 * A passkey that did not verify its user (PasskeyUserVerification=preferred) is one factor: ByPasskey
 * answered 202, and the passcode goes with a fresh assertion (a challenge answers once) to ByPasskey.
 */
let passkeyMfa = false;

/** The 202 of a password sign-in that asks for a passkey (contract 20): its challenge, and whether a passcode may answer instead. @type {PasskeyPrompt | null} */
let passkeyPrompt = null;

/** @param {Stage} next */
function show(next) {
  stage = next;
  credentials.hidden = next === 'mfa' || next === 'passkey';
  change.hidden = next !== 'change';
  passkeyStep.hidden = next !== 'passkey';
  // A passcode may answer the passkey step where the provider is configured (methods lists it).
  mfaStep.hidden = !(next === 'mfa' || (next === 'passkey' && passkeyPrompt?.methods?.includes('passcode')));
  byId('passkey-or-passcode').hidden = mfaStep.hidden || next !== 'passkey';
  submit.hidden = next === 'passkey' && mfaStep.hidden;
  passkeyButton.hidden = next !== 'credentials' || !passkeySignIn;
  userName.readOnly = next !== 'credentials';
  submit.textContent = next === 'change' ? 'Change password and sign in' : next === 'mfa' ? 'Verify' : 'Sign in';
  form.hidden = false;
  (next === 'passkey' ? usePasskey : next === 'mfa' ? passcode : next === 'change' ? newPassword : userName.value ? password : userName).focus();
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
  if (stage === 'mfa' || stage === 'passkey') return passcode.value.trim() ? [] : ['Enter the passcode.'];
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
  if (stage === 'mfa' && passkeyMfa) return passkeyWithPasscode();
  if (stage === 'mfa' && negotiateMfa) {
    const res = await api('POST', '/api/Authentication/ByNegotiateMfa', { mfa: passcode.value.trim() }, { on401: 'throw', accept: [401, 429] });
    if (res.status === 200) return done();
    if (res.status === 429) return say('error', THROTTLED, 'login-error');
    passcode.value = '';
    return say('error', GENERIC_FAILURE, 'login-error');
  }
  // The passcode step is reached only through a 202 to `pending`, so it is set there.
  const body = stage === 'mfa' || stage === 'passkey' ? { .../** @type {SignInBody} */ (pending), mfa: passcode.value.trim() } : await prepare();
  const res = await api('POST', '/api/Authentication/ByUserNamePassword', body, { on401: 'throw', accept: [202, 400, 401, 403, 404, 429] });
  if (res.status === 200) return done();
  // Past SignInThrottle (contract 13): about the address, not the account, so it may be said.
  if (res.status === 429) return say('error', THROTTLED, 'login-error');
  if (res.status === 202) {
    pending = body;
    clear(messages);
    if (res.json?.methods?.includes('passkey')) {
      passkeyPrompt = res.json;
      show('passkey');
      return secondFactorPasskey();
    }
    return show('mfa');
  }
  if (res.status === 403 && res.json?.code === 'PasswordChangeRequired') {
    say('info', 'Your password must be changed before you can sign in.', 'password-change-required');
    return show('change');
  }
  if (res.status === 400) return say('error', problemLines(new ApiError(400, res.json)), 'login-error');
  // 401 and everything else: one message, whatever the cause.
  if (stage === 'mfa' || stage === 'passkey') {
    passcode.value = '';
    pending = null;
    passkeyPrompt = null;
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

// ---- passkeys (contract 20) ---------------------------------------------------------------------

/** Passkey sign-in is offered (Passkeys on, and this browser can). */
let passkeySignIn = false;
/** The quiet autofill request waiting in the user name field; aborted before any other ceremony. @type {AbortController | null} */
let autofill = null;
const passkeyButton = h('button', { type: 'button', class: 'wide', id: 'passkey-login', hidden: true }, 'Sign in with a passkey');

/** @returns {Promise<PasskeyPrompt | null>} */
async function passkeyOptions() {
  const res = await api('POST', '/api/Authentication/Passkey/Options', {}, { on401: 'throw', accept: [404, 429] });
  return res.status === 200 ? res.json : null;
}

/**
 * Posts an assertion to ByPasskey: signed in, or the one message for every failure.
 * @param {string} challengeId @param {AuthenticationResponseJSON} response
 */
async function signInWithPasskey(challengeId, response) {
  const res = await api('POST', '/api/Authentication/ByPasskey', { challengeId, response }, { on401: 'throw', accept: [202, 401, 429] });
  if (res.status === 200) return done();
  if (res.status === 202) {
    // The passkey was one factor (it did not verify the user): the passcode completes the sign-in.
    autofill?.abort();
    autofill = null;
    passkeyMfa = true;
    clear(messages);
    say('info', 'Enter your passcode; your passkey is then asked for once more.', 'passkey-passcode');
    return show('mfa');
  }
  say('error', res.status === 429 ? THROTTLED : 'Sign-in with the passkey failed. Try again, or use your password.', 'login-error');
  rearmAutofill();
}

/**
 * After a failed or cancelled passkey, autofill is offered again once the user returns to the user
 * name field, not at once: an authenticator that answers by itself would otherwise retry in a loop.
 */
function rearmAutofill() {
  userName.addEventListener('focus', () => void offerAutofill(), { once: true });
}

/** Offers the user's passkeys in the user name field's autofill until one is picked (`ready`: options already fetched). @param {PasskeyPrompt | null} [ready] */
async function offerAutofill(ready = null) {
  if (!(await autofillSupported())) return;
  autofill?.abort();
  const controller = new AbortController();
  autofill = controller;
  try {
    const prompt = ready ?? (await passkeyOptions());
    if (!prompt || controller.signal.aborted) return;
    const response = await getPasskey(prompt.options, { conditional: true, signal: controller.signal });
    await signInWithPasskey(prompt.challengeId, response);
  } catch {
    // Autofill is a quiet offer: one that cannot be made (or is dropped) says nothing, and never
    // covers a message the page is showing.
  }
}

passkeyButton.addEventListener('click', async () => {
  autofill?.abort();
  autofill = null;
  passkeyButton.disabled = true;
  clear(messages);
  try {
    const prompt = await passkeyOptions();
    if (!prompt) return say('error', 'Passkey sign-in is not available right now.', 'login-error');
    await signInWithPasskey(prompt.challengeId, await getPasskey(prompt.options));
  } catch (error) {
    say(cancelled(error) ? 'info' : 'error', cancelled(error) ? 'No passkey was used.' : problemLines(error), 'login-error');
    rearmAutofill();
  } finally {
    passkeyButton.disabled = false;
  }
});

/** The passcode after a passkey that was one factor: a fresh assertion and the passcode to ByPasskey. */
async function passkeyWithPasscode() {
  const prompt = await passkeyOptions();
  if (!prompt) return say('error', 'Passkey sign-in is not available right now.', 'login-error');
  let response;
  try {
    response = await getPasskey(prompt.options);
  } catch (error) {
    return say(cancelled(error) ? 'info' : 'error', cancelled(error) ? 'No passkey was used. Use your passkey with the passcode to finish signing in.' : problemLines(error), 'login-error');
  }
  const res = await api('POST', '/api/Authentication/ByPasskey', { challengeId: prompt.challengeId, response, mfa: passcode.value.trim() }, { on401: 'throw', accept: [401, 429] });
  if (res.status === 200) return done();
  passkeyMfa = false;
  passcode.value = '';
  show('credentials');
  say('error', res.status === 429 ? THROTTLED : GENERIC_FAILURE, 'login-error');
  rearmAutofill();
}

/** The second factor after a right password: the passkey answers the 202's challenge (contract 20). */
async function secondFactorPasskey() {
  autofill?.abort();
  autofill = null;
  usePasskey.disabled = true;
  try {
    // The passkey step is reached only through a 202 that sets `passkeyPrompt`.
    const response = await getPasskey(/** @type {PasskeyPrompt} */ (passkeyPrompt).options);
    const res = await api('POST', '/api/Authentication/ByUserNamePassword', { ...pending, passkey: { challengeId: /** @type {PasskeyPrompt} */ (passkeyPrompt).challengeId, response } }, { on401: 'throw', accept: [401, 429] });
    if (res.status === 200) return done();
    pending = null;
    passkeyPrompt = null;
    password.value = '';
    show('credentials');
    say('error', res.status === 429 ? THROTTLED : GENERIC_FAILURE, 'login-error');
  } catch (error) {
    say(cancelled(error) ? 'info' : 'error', cancelled(error) ? 'No passkey was used. Use your passkey to finish signing in.' : problemLines(error), 'login-error');
  } finally {
    usePasskey.disabled = false;
  }
}
usePasskey.addEventListener('click', () => void secondFactorPasskey());

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
  // Passkeys are offered beside the password when the service has them on (Options answers 404 when off).
  const prompt = available.password && passkeysSupported() ? await passkeyOptions().catch(() => null) : null;
  // Passkeys are bound to the relying party's host: a page reached by another name (an address) cannot use them.
  const host = location.hostname;
  passkeySignIn = prompt !== null && (host === prompt.options.rpId || host.endsWith(`.${prompt.options.rpId}`));
  card.append(passkeyButton);
  show('credentials');
  if (passkeySignIn) void offerAutofill(prompt);
}
document.body.dataset.ready = 'true';
