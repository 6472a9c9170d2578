import type { Request } from 'express';

/** Where a request came from, for the audit rows. Texts are still raw: writers bound them. */
export interface RequestContext {
  remoteIp: string | null;
  localIp: string | null;
  userAgent: string | null;
}

/**
 * req.ip is the client address of contract 13: the right-most X-Forwarded-For entry that is not one
 * of the proxies TrustProxy names (Express `trust proxy` set to a hop count or an address list, never
 * `true`), so a caller cannot choose the address written to the audit trail or counted by the
 * per-address rules.
 */
export function requestContext(req: Request): RequestContext {
  return {
    remoteIp: (req.ip ?? req.socket.remoteAddress ?? null)?.replace(/^::ffff:/, '') ?? null,
    localIp: req.socket.localAddress?.replace(/^::ffff:/, '') ?? null,
    userAgent: req.get('user-agent') ?? null,
  };
}
