import type { Request } from 'express';

/** Where a request came from, for the audit rows. Texts are still raw: writers bound them. */
export interface RequestContext {
  remoteIp: string | null;
  localIp: string | null;
  userAgent: string | null;
}

/**
 * req.ip honours X-Forwarded-For only when TrustProxy is set (Express `trust proxy`), so a caller
 * cannot choose the address that is written to the audit trail.
 */
export function requestContext(req: Request): RequestContext {
  return {
    remoteIp: (req.ip ?? req.socket.remoteAddress ?? null)?.replace(/^::ffff:/, '') ?? null,
    localIp: req.socket.localAddress?.replace(/^::ffff:/, '') ?? null,
    userAgent: req.get('user-agent') ?? null,
  };
}
