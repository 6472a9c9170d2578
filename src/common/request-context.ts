import type { Request } from 'express';
import { isIP } from 'node:net';

/** Where a request came from, for the audit rows. Texts are still raw: writers bound them. */
export interface RequestContext {
  remoteIp: string | null;
  localIp: string | null;
  userAgent: string | null;
}

/**
 * The columns a request gives an audit row (contract 9, 18), named as the rows name them: its
 * addresses and agent, each null when there is no request (a purge) or the request did not say.
 */
export function requestColumns(context: RequestContext | null): RequestContext {
  return { remoteIp: context?.remoteIp ?? null, localIp: context?.localIp ?? null, userAgent: context?.userAgent ?? null };
}

/**
 * One address as a canonical text, or null when it is none: a port a proxy may have appended
 * (`198.51.100.7:4711`, `[2001:db8::7]:443`) is dropped, an IPv4-mapped IPv6 address is written as the
 * IPv4 address it maps, IPv6 in lower case. Anything else (a name, garbage, an empty entry) is null.
 */
export function canonicalAddress(raw: string | undefined | null): string | null {
  if (!raw) return null;
  let text = raw.trim();
  if (text.length > 64) return null;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) text = bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  if (v4WithPort) text = v4WithPort[1];
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(text);
  if (mapped) text = mapped[1];
  const kind = isIP(text);
  if (kind === 4) return text;
  if (kind === 6) return text.toLowerCase();
  return null;
}

/**
 * The client address of contract 13: the right-most X-Forwarded-For entry that is not one of the
 * proxies TrustProxy names (Express `trust proxy` set to a hop count or an address list, never
 * `true`), so a caller cannot choose the address written to the audit trail or counted by the
 * per-address rules. `req.ips` is that trusted chain (client first, nearest proxy last); when the
 * entry at the client's place is no address (garbage, a name, too long), the nearest hop that is
 * one stands for it: the proxy that forwarded it, never anything written to its left. With no
 * proxy trusted, the peer's address.
 */
export function clientAddress(req: Request): string | null {
  const chain = [...(req.ips ?? []), req.socket.remoteAddress];
  for (const entry of chain) {
    const address = canonicalAddress(entry);
    if (address) return address;
  }
  return null;
}

export function requestContext(req: Request): RequestContext {
  return {
    remoteIp: clientAddress(req),
    localIp: canonicalAddress(req.socket.localAddress),
    userAgent: req.get('user-agent') ?? null,
  };
}
