import { isIP } from 'node:net';

/** One host and port: a Redis, or a Sentinel. */
export interface RedisAddress {
  host: string;
  port: number;
}

/**
 * Where the service finds Redis, from RedisConnectionString. Credentials are kept apart from the
 * addresses so that `describeRedisTarget` (logs, telemetry rows) can never show them.
 */
export type RedisTarget =
  | {
      kind: 'redis';
      address: RedisAddress;
      username: string | null;
      password: string | null;
      db: number;
      /** rediss:// */
      tls: boolean;
    }
  | {
      kind: 'sentinel';
      sentinels: RedisAddress[];
      masterName: string;
      /** Credentials of the master and replicas (the userinfo before the first Sentinel). */
      username: string | null;
      password: string | null;
      /** Credentials of the Sentinels themselves (query `sentinelUsername`, `sentinelPassword`). */
      sentinelUsername: string | null;
      sentinelPassword: string | null;
      db: number;
      /** sentinels:// : TLS to the Sentinels and to the master they name. */
      tls: boolean;
    };

export const REDIS_DEFAULT_PORT = 6379;
export const SENTINEL_DEFAULT_PORT = 26379;
/** More Sentinels than this in one URL is a pasted mistake, not a deployment. */
export const MAX_SENTINELS = 32;
const MAX_DB = 1_000_000;
const SENTINEL_QUERY = ['sentinelUsername', 'sentinelPassword'];

/** The forms, as a refusal names them. */
export const REDIS_CONNECTION_FORMS =
  'redis://[user:password@]host[:port][/db], rediss://… (TLS), or sentinel://[user:password@]host[:port],host[:port]…/mastername[/db][?sentinelPassword=…] (sentinels://… for TLS)';

/**
 * Parses RedisConnectionString. A problem never repeats the value (it may hold a password): it says
 * what is wrong and where (which Sentinel of the list, which parameter).
 *
 * - `redis://[user:password@]host[:port][/db]`, `rediss://…` for TLS: one Redis.
 * - `sentinel://[user:password@]host[:port][,host[:port]…]/mastername[/db]`: the Sentinels (default
 *   port 26379) and the name of the master they watch. The userinfo before the first Sentinel is
 *   the password (and ACL user) of the master and replicas; the Sentinels' own, when they have
 *   `requirepass`, goes in the query: `?sentinelPassword=…` (and `sentinelUsername=…`).
 *   `sentinels://…` is the same over TLS, to the Sentinels and to the master.
 *
 * Reserved characters in a user name, password or master name are percent-encoded (`@` `:` `/` `?`
 * `#` `,` `%` `&`). Unknown query parameters are refused rather than ignored: a misspelt
 * `sentinelPassword` must not quietly mean "no password".
 */
export function parseRedisConnectionString(value: string): RedisTarget | { problem: string } {
  const scheme = /^([a-z]+):\/\//i.exec(value)?.[1].toLowerCase();
  if (scheme === 'redis' || scheme === 'rediss') return parseRedisUrl(value, scheme === 'rediss');
  if (scheme === 'sentinel' || scheme === 'sentinels') return parseSentinelUrl(value.slice(scheme.length + 3), scheme === 'sentinels');
  return { problem: `expected ${REDIS_CONNECTION_FORMS}` };
}

/** What logs and telemetry rows show of the target: addresses and master name, never credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  if (target.kind === 'redis') return `${formatAddress(target.address)}`;
  return `sentinel:${target.sentinels.map(formatAddress).join(',')}/${target.masterName}`;
}

export function formatAddress(address: RedisAddress): string {
  return `${isIP(address.host) === 6 ? `[${address.host}]` : address.host}:${address.port}`;
}

function parseRedisUrl(value: string, tls: boolean): RedisTarget | { problem: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { problem: `not a URL; expected ${REDIS_CONNECTION_FORMS}` };
  }
  if (!url.hostname) return { problem: 'the host is missing' };
  if (url.search || url.hash) return { problem: `redis:// and rediss:// take no query parameters or fragment; expected ${REDIS_CONNECTION_FORMS}` };
  const db = parseDb(url.pathname.slice(1));
  if (db === null) return { problem: `the database after the host must be a whole number from 0 to ${MAX_DB}` };
  const username = decode(url.username);
  const password = decode(url.password);
  if (username === undefined || password === undefined) return { problem: 'the user name or password is not validly percent-encoded' };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { kind: 'redis', address: { host, port: Number(url.port || REDIS_DEFAULT_PORT) }, username, password, db, tls };
}

function parseSentinelUrl(rest: string, tls: boolean): RedisTarget | { problem: string } {
  const question = rest.indexOf('?');
  const query = question >= 0 ? rest.slice(question + 1) : null;
  const beforeQuery = question >= 0 ? rest.slice(0, question) : rest;
  if (beforeQuery.includes('#')) return { problem: 'a "#" must be percent-encoded (%23)' };
  const slash = beforeQuery.indexOf('/');
  if (slash < 0) return { problem: `the master name is missing after the Sentinel list; expected ${REDIS_CONNECTION_FORMS}` };
  const authority = beforeQuery.slice(0, slash);
  const path = beforeQuery.slice(slash + 1);

  // Credentials: once, before the first Sentinel (the last "@": a password may hold an encoded one).
  const at = authority.lastIndexOf('@');
  let username: string | null = null;
  let password: string | null = null;
  if (at >= 0) {
    const userinfo = authority.slice(0, at);
    const colon = userinfo.indexOf(':');
    const user = decode(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
    const pass = decode(colon >= 0 ? userinfo.slice(colon + 1) : '');
    if (user === undefined || pass === undefined) return { problem: 'the user name or password is not validly percent-encoded' };
    if (user?.includes(',')) return { problem: 'credentials go once, before the first Sentinel (user:password@host:port,host:port/…)' };
    username = user;
    password = pass;
  }

  const entries = authority.slice(at + 1).split(',');
  if (entries.length > MAX_SENTINELS) return { problem: `at most ${MAX_SENTINELS} Sentinels` };
  const sentinels: RedisAddress[] = [];
  for (const [i, entry] of entries.entries()) {
    const address = parseAddress(entry.trim(), SENTINEL_DEFAULT_PORT);
    if (!address) {
      return {
        problem:
          entry.trim() === ''
            ? `Sentinel ${i + 1} of ${entries.length} is empty (a stray comma?); expected host[:port],host[:port]…`
            : `Sentinel ${i + 1} of ${entries.length} is not a host[:port] with a port from 1 to 65535 (IPv6 in brackets)`,
      };
    }
    if (sentinels.some((s) => s.host.toLowerCase() === address.host.toLowerCase() && s.port === address.port)) {
      return { problem: `Sentinel ${i + 1} of ${entries.length} repeats an earlier one` };
    }
    sentinels.push(address);
  }

  const [rawName, rawDb, ...extra] = path.split('/');
  const masterName = decode(rawName ?? '');
  if (!masterName) return { problem: `the master name is missing after the Sentinel list; expected ${REDIS_CONNECTION_FORMS}` };
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(masterName) || masterName.length > 200) {
    return { problem: 'the master name must be at most 200 characters without spaces or control characters' };
  }
  const db = parseDb(rawDb ?? '');
  if (db === null || extra.length > 0) return { problem: `after the master name only a database number may follow (/mastername/db, 0 to ${MAX_DB})` };

  let sentinelUsername: string | null = null;
  let sentinelPassword: string | null = null;
  if (query !== null && query !== '') {
    const seen = new Set<string>();
    for (const pair of query.split('&')) {
      const eq = pair.indexOf('=');
      const key = eq >= 0 ? pair.slice(0, eq) : pair;
      const parameter = decode(eq >= 0 ? pair.slice(eq + 1) : '');
      // Not repeated: a password pasted in the wrong place must not reach the log.
      if (!SENTINEL_QUERY.includes(key)) return { problem: `an unknown query parameter; only ${SENTINEL_QUERY.join(' and ')} are read` };
      if (seen.has(key)) return { problem: `the query parameter ${key} is given twice` };
      seen.add(key);
      if (parameter === undefined) return { problem: `the query parameter ${key} is not validly percent-encoded` };
      if (key === 'sentinelUsername') sentinelUsername = parameter;
      else sentinelPassword = parameter;
    }
  }
  return { kind: 'sentinel', sentinels, masterName, username, password, sentinelUsername, sentinelPassword, db, tls };
}

function parseAddress(entry: string, defaultPort: number): RedisAddress | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+))(?::(\d{1,5}))?$/.exec(entry);
  if (!match) return null;
  const host = match[1] ?? match[2];
  if (match[1] !== undefined && isIP(host) !== 6) return null;
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65_535) return null;
  return { host, port };
}

/** '' is database 0; otherwise a whole number in range, or null. */
function parseDb(text: string): number | null {
  if (text === '') return 0;
  if (!/^\d{1,7}$/.test(text) || Number(text) > MAX_DB) return null;
  return Number(text);
}

/** Percent-decoding; '' is null (absent), a malformed escape is undefined. */
function decode(text: string): string | null | undefined {
  if (text === '') return null;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}
