import type { NextFunction, Request, Response } from 'express';
import { sendProblem } from '../common/problem';
import { JWT_COOKIE } from './cookies';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
 * With CsrfOriginCheck, a state-changing request that carries the session cookie and neither an
 * Authorization nor an x-api-key header must prove it is same-origin (contract 4); cookies carry no
 * antiforgery token.
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

export function csrfOriginCheck(enabled: boolean) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (
      enabled &&
      UNSAFE.has(req.method) &&
      (req.cookies as Record<string, string> | undefined)?.[JWT_COOKIE] !== undefined &&
      req.headers.authorization === undefined &&
      req.headers['x-api-key'] === undefined &&
      !isProvablySameOrigin(req)
    ) {
      sendProblem(res, {
        type: 'about:blank',
        title: 'Forbidden',
        status: 403,
        detail: 'A request carrying the session cookie must come from this site.',
      });
      return;
    }
    next();
  };
}
