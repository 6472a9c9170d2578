import type { Request } from 'express';
import { presentedCredential } from './authenticator.service';
import { JWT_COOKIE } from './cookies';

/** What the CSRF rule (guard/csrf.guard.ts) asks of a request: is it same-origin, is the cookie its credential. */

function originOf(value: string): string | null {
  try {
    const url = new URL(value);
    if (url.origin === 'null') return null;
    return url.origin.toLowerCase();
  } catch {
    return null;
  }
}

/** The request's own origin: scheme, host and port, lower case, default port dropped by URL. */
export function requestOrigin(req: Request): string | null {
  const host = req.get('host');
  if (!host) return null;
  return originOf(`${req.protocol}://${host}`);
}

/**
 * Same-origin proof for a cookie-authenticated state-changing request (contract 4); cookies carry
 * no antiforgery token: Sec-Fetch-Site, else Origin, else Referer, else refused.
 */
export function isProvablySameOrigin(req: Request): boolean {
  const fetchSite = req.get('sec-fetch-site');
  if (fetchSite !== undefined) return ['same-origin', 'none'].includes(fetchSite.toLowerCase());
  const own = requestOrigin(req);
  if (!own) return false;
  const origin = req.get('origin');
  if (origin !== undefined) return originOf(origin) === own;
  const referer = req.get('referer');
  if (referer !== undefined) return originOf(referer) === own;
  return false;
}

/**
 * Whether the session cookie is what authenticates this request (contract 13): it carries the cookie,
 * and neither an x-api-key header nor `Authorization: Bearer <token>` takes precedence over it
 * (the same precedence as the authenticator's, {@link presentedCredential}). Any other Authorization
 * header (Basic, Negotiate, an empty Bearer) leaves the cookie in charge, so it exempts nothing.
 */
export function cookieAuthenticates(req: Request): boolean {
  if ((req.cookies as Record<string, string> | undefined)?.[JWT_COOKIE] === undefined) return false;
  const credential = presentedCredential(req);
  return credential === null || credential.type === 'Cookie';
}
