import { createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import { boundText, hasControlCharacter } from '../common/text';
import { SINK_FORMATS, SINK_TYPES, SinkFormat, SinkType, MASK } from './sink-kinds';

/** A field problem of a sink body (the 400's `errors`). */
export interface SinkFieldProblem {
  field: string;
  message: string;
}

/** A sink's configuration as the caller gave it, checked. Secrets in clear: they go straight to the box. */
export interface SinkInput {
  name: string;
  type: SinkType;
  url: string;
  format: SinkFormat;
  /** Undefined: keep the one set (PUT); a string: set it. */
  secret: string | undefined;
  /** Undefined: keep them (PUT); an object: replace them (a value of "****" keeps that header's value). */
  headers: Record<string, string> | undefined;
  active: boolean;
  startLeafIndex: number | undefined;
}

const FIELDS = ['name', 'type', 'url', 'format', 'secret', 'headers', 'active', 'startLeafIndex'];
const MAX_HEADERS = 20;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Headers the deliverer writes itself, or that would change how the request is framed. */
const RESERVED_HEADERS = new Set(['content-type', 'content-length', 'host', 'x-signature', 'x-leaf-first', 'x-leaf-last', 'transfer-encoding', 'connection', 'expect', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-connection']);
const MAX_SECRET = 16_384;
/** Shortest webhook signing key: 128 bits written as text. */
export const MIN_WEBHOOK_SECRET = 16;

/** True for a host that is this machine: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  return false;
}

/** Where a sink sends: the parsed URL (webhook) or host, port and TLS (syslog). */
export type SinkTarget = { kind: 'webhook'; url: URL } | { kind: 'syslog'; host: string; port: number; tls: boolean };

/** The target of a stored URL (already checked when it was stored). */
export function sinkTarget(type: SinkType, url: string): SinkTarget {
  const parsed = new URL(url);
  if (type === 'webhook') return { kind: 'webhook', url: parsed };
  const tls = parsed.protocol === 'syslog+tls:';
  return { kind: 'syslog', host: parsed.hostname.replace(/^\[|\]$/g, ''), port: parsed.port ? Number(parsed.port) : tls ? 6514 : 514, tls };
}

/** What is wrong with a URL for a sink of `type`, or null. */
export function urlProblem(type: SinkType, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.username || parsed.password) return 'credentials in the URL are not allowed (use headers or the secret)';
  if (parsed.hash) return 'a fragment is not allowed';
  if (type === 'webhook') {
    if (parsed.protocol === 'https:') return parsed.hostname ? null : 'a host is required';
    if (parsed.protocol === 'http:') return isLoopbackHost(parsed.hostname) ? null : 'http:// is allowed only to a loopback host (127.0.0.1, ::1, localhost); use https://';
    return 'a webhook URL starts with https:// (or http:// to a loopback host)';
  }
  if (parsed.protocol !== 'syslog:' && parsed.protocol !== 'syslog+tls:') return 'a syslog URL is syslog://host:port or syslog+tls://host:port';
  if (!parsed.hostname) return 'a host is required';
  if ((parsed.pathname && parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search) return 'a syslog URL has no path or query';
  return null;
}

/** What is wrong with a syslog TLS client key (PEM: a private key, optionally followed by its certificate chain), or null. */
function clientKeyProblem(pem: string): string | null {
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem)) return 'a syslog secret is the TLS client key in PEM (a private key, then its certificate)';
  try {
    createPrivateKey(pem);
    return null;
  } catch {
    return 'the PEM private key does not parse';
  }
}

/**
 * Checks a POST (`creating`) or PUT body against contract 19 and answers the sink it asks for, or
 * every field problem at once. `existing`: what a PUT keeps when secret or headers are left out.
 * Pure: the caller turns problems into one 400 problem+json.
 */
export function parseSinkInput(
  body: unknown,
  creating: boolean,
  existing: { secretSet: boolean; headers: Record<string, string> | null } = { secretSet: false, headers: null },
): { input: SinkInput } | { problems: SinkFieldProblem[] } {
  const problems: SinkFieldProblem[] = [];
  const bad = (field: string, message: string) => problems.push({ field, message });
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { problems: [{ field: '', message: 'a JSON object is expected' }] };
  const b = body as Record<string, unknown>;
  for (const key of Object.keys(b)) if (!FIELDS.includes(key)) bad(key, 'unknown field');

  let name = '';
  if (typeof b.name !== 'string') bad('name', 'required text');
  else {
    name = (boundText(b.name, 64) ?? '').trim();
    if (Array.from(b.name.trim()).length > 64) bad('name', 'at most 64 characters');
    else if (name === '') bad('name', 'required text');
  }

  const type = b.type;
  if (type !== 'webhook' && type !== 'syslog') bad('type', 'one of webhook, syslog');
  const format = b.format ?? 'ocsf';
  if (format !== 'ocsf' && format !== 'cef') bad('format', 'one of ocsf, cef');
  else if (format === 'cef' && type === 'webhook') bad('format', 'cef is for syslog sinks only');

  let url = '';
  if (typeof b.url !== 'string' || b.url.trim() === '') bad('url', 'required text');
  else if (b.url.length > 512) bad('url', 'at most 512 characters');
  else if (hasControlCharacter(b.url)) bad('url', 'control characters are not allowed');
  else if (type === 'webhook' || type === 'syslog') {
    url = b.url.trim();
    const problem = urlProblem(type, url);
    if (problem) bad('url', problem);
  }

  let secret: string | undefined;
  if (b.secret !== undefined && b.secret !== null) {
    if (typeof b.secret !== 'string') bad('secret', 'text');
    else if (b.secret.length > MAX_SECRET) bad('secret', `at most ${MAX_SECRET} characters`);
    else if (type === 'webhook') {
      if (b.secret.length < MIN_WEBHOOK_SECRET) bad('secret', `a webhook signing key has at least ${MIN_WEBHOOK_SECRET} characters`);
      else if (hasControlCharacter(b.secret)) bad('secret', 'control characters are not allowed');
      else secret = b.secret;
    } else if (type === 'syslog') {
      if (!url.startsWith('syslog+tls:')) bad('secret', 'a syslog secret is a TLS client key: only for syslog+tls://');
      else {
        const problem = clientKeyProblem(b.secret);
        if (problem) bad('secret', problem);
        else secret = b.secret;
      }
    }
  }
  if (type === 'webhook' && secret === undefined && !problems.some((p) => p.field === 'secret') && (creating || !existing.secretSet)) {
    bad('secret', 'required for a webhook (the HMAC signing key)');
  }

  let headers: Record<string, string> | undefined;
  if (b.headers !== undefined && b.headers !== null) {
    if (typeof b.headers !== 'object' || Array.isArray(b.headers)) bad('headers', 'an object of header name to value');
    else if (type === 'syslog') bad('headers', 'headers are for webhook sinks only');
    else {
      const entries = Object.entries(b.headers as Record<string, unknown>);
      if (entries.length > MAX_HEADERS) bad('headers', `at most ${MAX_HEADERS} headers`);
      headers = {};
      const seen = new Set<string>();
      for (const [key, value] of entries) {
        const lower = key.toLowerCase();
        if (!HEADER_NAME.test(key)) bad(`headers.${key}`, 'not a header name (letters, digits and !#$%&\'*+.^_`|~-, at most 64)');
        else if (RESERVED_HEADERS.has(lower)) bad(`headers.${key}`, 'set by the service itself');
        else if (seen.has(lower)) bad(`headers.${key}`, 'given twice');
        else if (typeof value !== 'string' || value.length === 0 || value.length > 4096 || hasControlCharacter(value)) {
          bad(`headers.${key}`, 'a value of 1 to 4096 characters without control characters');
        } else if (value === MASK) {
          const kept = existing.headers && Object.entries(existing.headers).find(([k]) => k.toLowerCase() === lower);
          if (!kept) bad(`headers.${key}`, `"${MASK}" keeps a value already set; this header has none`);
          else headers[key] = kept[1];
        } else headers[key] = value;
        seen.add(lower);
      }
    }
  }

  let active = true;
  if (b.active !== undefined) {
    if (typeof b.active !== 'boolean') bad('active', 'true or false');
    else active = b.active;
  }

  let startLeafIndex: number | undefined;
  if (b.startLeafIndex !== undefined && b.startLeafIndex !== null) {
    if (!creating) bad('startLeafIndex', 'only at creation; use Replay to send leaves again');
    else if (typeof b.startLeafIndex !== 'number' || !Number.isSafeInteger(b.startLeafIndex) || b.startLeafIndex < 0) bad('startLeafIndex', 'a whole number, 0 or more');
    else startLeafIndex = b.startLeafIndex;
  }

  if (problems.length > 0) return { problems };
  return { input: { name, type: type as SinkType, url, format: format as SinkFormat, secret, headers, active, startLeafIndex } };
}

export { SINK_TYPES, SINK_FORMATS };
