// The one way pages talk to the API: same-origin fetch with the session cookie. The browser adds
// Sec-Fetch-Site and Origin itself, which is what the service's CSRF origin check asks for.

/**
 * A problem+json answer as the pages read it.
 * @typedef {{ title?: string, detail?: string, errors?: { field?: string, message?: string }[] }} Problem
 */

/** A refused call: its status and problem+json body. */
export class ApiError extends Error {
  /** @param {number} status @param {Problem | undefined} problem */
  constructor(status, problem) {
    super(problem?.detail || problem?.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem ?? {};
  }
}

/** The sign-in page, coming back here afterwards. @param {string} [back] */
export function loginUrl(back = location.pathname + location.search) {
  return `/Account/Login?returnUrl=${encodeURIComponent(back)}`;
}

/**
 * Calls the API. A 401 on a page that needs a session sends the browser to sign in (the session has
 * ended); pass { on401: 'throw' } to handle it yourself. `accept`: statuses answered rather than
 * thrown. The body is whatever the contract says of that route: a page names the type it keeps
 * (from api-types.d.ts) where it stores it.
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{ on401?: 'throw' | 'redirect', accept?: number[] }} [options]
 * @returns {Promise<{ status: number, json: any, headers: Headers }>}
 */
export async function api(method, path, body, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  /** @type {RequestInit} */
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (response.status === 401 && options.on401 !== 'throw') {
    location.assign(`${loginUrl()}&session=${sessionEndKind()}`);
    throw new ApiError(401, json);
  }
  if (!response.ok && !(options.accept ?? []).includes(response.status)) throw new ApiError(response.status, json);
  return { status: response.status, json, headers: response.headers };
}

/**
 * Why a page that had a session got a 401: the countdown cookie still in the future means the
 * session was ended before its time (signed out elsewhere, password changed, an administrator),
 * otherwise it simply expired. The sign-in page explains either.
 */
function sessionEndKind() {
  const match = document.cookie.match(/(?:^|;\s*)authentication-expiry=([^;]*)/);
  const expiry = match ? new Date(decodeURIComponent(match[1])).getTime() : NaN;
  return Number.isFinite(expiry) && expiry > Date.now() ? 'ended' : 'expired';
}

/** newPassword → "New password". @param {unknown} name */
export function humanise(name) {
  const words = String(name).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * One field problem as a sentence: "take must be a whole number." → "Take must be a whole number."
 * (the field named once), "must equal newPassword" → "Repeat new password must equal newPassword".
 * @param {{ field?: string, message?: string }} problem
 */
function fieldLine(problem) {
  const message = String(problem.message ?? problem);
  if (!problem.field) return message;
  const field = String(problem.field).replace(/\W/g, '');
  return `${humanise(field)} ${message.replace(new RegExp(`^${field}\\b\\s*`, 'i'), '')}`;
}

/**
 * The lines to show for a failed call: every field error, else the detail, else a plain sentence.
 * @param {unknown} error
 * @returns {string[]}
 */
export function problemLines(error) {
  if (!(error instanceof ApiError)) return ['The service could not be reached. Check the connection and try again.'];
  const errors = Array.isArray(error.problem.errors) ? error.problem.errors : [];
  if (errors.length > 0) return errors.map(fieldLine);
  if (error.status === 403) return [error.problem.detail || 'You do not have permission for this.'];
  if (error.status === 404) return [error.problem.detail || 'Not found.'];
  if (error.status >= 500) return ['The service could not complete the request. Try again later.'];
  return [error.problem.detail || error.problem.title || `The request failed (HTTP ${error.status}).`];
}

/**
 * Where to go after signing in: the returnUrl of this page's address when it is a local path (one
 * leading `/`, not `//` or `/\`, no backslash, no control character), else the home page.
 * @param {unknown} [value]
 */
export function safeReturnUrl(value = new URLSearchParams(location.search).get('returnUrl')) {
  if (typeof value !== 'string' || value.length > 2048) return '/';
  if (!value.startsWith('/') || value.startsWith('//') || value.includes('\\')) return '/';
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return '/';
  return value.toLowerCase().startsWith('/account/login') ? '/' : value;
}
