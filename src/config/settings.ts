import { createPrivateKey } from 'node:crypto';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { parseRedisConnectionString } from './redis-connection-string';

/** Unit of an interval setting: seconds, minutes (n), hours, days. */
export type IntervalUnit = 's' | 'n' | 'h' | 'd';

/**
 * Every setting of the service, parsed once from the environment (see .env.example for each one's
 * meaning and default). Nothing outside src/config reads process.env; everything else receives this.
 *
 * Longer than 400 lines on purpose: this file is the one place every setting is declared, parsed and
 * refused (STYLE habit 2); splitting it by feature would scatter the list an operator reads whole.
 */
export interface Settings {
  production: boolean;
  port: number;
  bindAddress: string | null;
  connectionString: string | null;
  dataDirectory: string;
  /** Milliseconds an unused database connection stays in the pool (0: kept open). */
  databasePoolIdleTimeoutMs: number;
  redisConnectionString: string | null;
  administratorInitialPassword: string;
  instance: string;
  logLevel: 'error' | 'warn' | 'log' | 'debug' | 'verbose';
  /** Log lines as text, or as one JSON object per line (for log shippers). */
  logFormat: 'text' | 'json';

  /** Secrets; null until resolved (generated outside production, see secrets.ts). */
  jwtKey: string | null;
  apiHmacKey: string | null;
  passwordHashingKey: string | null;
  jwtIssuer: string;
  jwtAudience: string;

  /** Ed25519 private key (PKCS#8 PEM) signing the audit checkpoints (contract 15); null until resolved (secrets.ts). */
  auditSigningKey: string | null;
  /** The origin line of every checkpoint; null: `transaction-monitoring/audit/<database system identifier>`. */
  auditLogOrigin: string | null;
  /** How often waiting audit rows are sealed into the log, in milliseconds. */
  auditSealIntervalMs: number;
  /** PEM file of CA certificates the SIEM sinks trust besides the system's (contract 19); null: the system's only. */
  securitySinkCaFile: string | null;

  secureHttpCookie: boolean;
  /** Express `trust proxy`: false, a hop count, or the proxies' addresses and CIDR ranges (contract 13). */
  trustProxy: TrustProxy;
  sessionCookie: boolean;
  csrfOriginCheck: boolean;
  /** Absolute session lifetime in milliseconds. */
  sessionAbsoluteLifetimeMs: number;
  /** Interval between re-checks of open streams, in milliseconds. */
  revokedSessionCheckMs: number;
  /** How long ended UserSession rows are kept before the daily purge (contract 14), in milliseconds. */
  sessionRetentionMs: number;
  /**
   * How long UserLogin and UserLogout rows are kept (contract 16), in milliseconds; 0 keeps them for
   * ever. Retention drops a whole month's partition once all of that month is older than this.
   */
  auditRetentionMs: number;
  /** How long telemetry rows are kept (contract 16), in milliseconds; 0 keeps them for ever. Whole days are dropped. */
  telemetryRetentionMs: number;

  /** Failed sign-ins tolerated per client address and window (SignInThrottle, contract 13); null: off. */
  signInThrottle: SignInThrottleSetting | null;
  passwordAttempts: number;
  passwordExpiryDays: number;
  passwordAsymmetricEncryption: boolean;
  passwordAsymmetricEncryptionPublicKey: string | null;
  passwordAsymmetricEncryptionPrivateKey: string | null;

  oauthAuthentication: boolean;
  oauthAuthority: string | null;
  oauthClientId: string | null;
  oauthClientSecret: string | null;
  oauthForceGet: boolean;
  oauthForceRedirect: string | null;
  oauthRedirectUri: string | null;

  negotiateAuthentication: boolean;

  /** Passkeys (contract 20): the scheme and the second factor are offered; false: every passkey route answers 404. */
  passkeys: boolean;
  /** WebAuthn relying party id: the host name (or a registrable suffix of it) the credentials are scoped to. */
  passkeyRelyingPartyId: string;
  /** Origins a ceremony may come from, exactly (scheme, host, port); default http://localhost:<Port>. */
  passkeyOrigins: string[];
  /** `required`: an assertion without user verification is refused (FailureTypeId 15); `preferred`: accepted. */
  passkeyUserVerification: 'required' | 'preferred';
  /** True: a backup-eligible (synced) credential is refused at registration and at sign-in. */
  passkeyDeviceBoundOnly: boolean;

  enableMultifactorAuthentication: boolean;
  /** Null means the bundled mock at {base_url}/api/mfa. */
  multifactorAuthenticationEndpoint: string | null;
  multifactorAuthenticationApplicationId: string;
  multifactorAuthenticationClientKey: string;
  outboundHttpMfaCertificateBypass: boolean;
  outboundHttpMfaCertificateThumbprint: string | null;

  archiverWarnThresholdMilliseconds: number;
  caseCreationWarnThresholdMilliseconds: number;
  enableOpenTelemetry: boolean;
  otlpEndpoint: string | null;
  otlpHeaders: string | null;
  otlpExportIntervalMs: number;

  /** Deadlines on every wait for a dependency (see .env.example), in milliseconds. */
  databaseConnectTimeoutMs: number;
  databaseQueryTimeoutMs: number;
  redisCommandTimeoutMs: number;
  negotiateTimeoutMs: number;
  /** Prefix of every Redis channel name, so deployments sharing one Redis stay apart. */
  redisChannelPrefix: string;
}

/**
 * Which peers may speak for the client in X-Forwarded-For: none (false), the nearest N hops, or the
 * listed proxy addresses and CIDR ranges. The client is the right-most entry that is not a trusted
 * proxy, so entries a client writes to the left of what our own proxies append are never used.
 */
export type TrustProxy = false | number | string[];

/** `SignInThrottle`: at most `limit` failed sign-ins per client address within `windowMs`. */
export interface SignInThrottleSetting {
  limit: number;
  windowMs: number;
}

/** Most hops a deployment can have in front of the service; more is a typo. */
const MAX_PROXY_HOPS = 32;

/**
 * TrustProxy: False (default), True (one hop: the immediate peer only), a whole number of hops, or a
 * comma-separated list of proxy addresses or CIDR ranges. True never means "every hop" (Express's
 * own `true`), which would let a client choose its address by writing X-Forwarded-For itself.
 */
export function parseTrustProxy(value: string | undefined): TrustProxy | { problem: string } {
  if (value === undefined) return false;
  const lower = value.toLowerCase();
  if (lower === 'false' || lower === '0') return false;
  if (lower === 'true') return 1;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= MAX_PROXY_HOPS) return hops;
    return { problem: `TrustProxy: a hop count must be from 1 to ${MAX_PROXY_HOPS}, got "${value}"` };
  }
  const entries = value.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !isAddressOrRange(entry));
  if (bad.length > 0) {
    return {
      problem: `TrustProxy: expected False, True, a hop count or a comma-separated list of addresses and CIDR ranges; not an address or range: "${bad[0]}"`,
    };
  }
  return entries;
}

function isAddressOrRange(entry: string): boolean {
  const slash = entry.indexOf('/');
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return false;
  if (slash < 0) return true;
  const prefix = entry.slice(slash + 1);
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

export const DEFAULT_MFA_CLIENT_KEY = 'DefaultMultifactorClientKey-ChangeMe';
export const MOCK_MFA_PASSCODE = '12345678';

/** Thrown when the environment cannot be turned into settings; one line per bad variable. */
export class SettingsError extends Error {
  constructor(readonly problems: string[]) {
    super(`Refusing to start, invalid settings:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

type Env = Record<string, string | undefined>;

const UNIT_MS: Record<IntervalUnit, number> = { s: 1000, n: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * An interval written `unit/value` (`d/30`, `s/1`; units s, n for minutes, h, d; value 1 to 1000000)
 * in milliseconds, or null when it is not one. Shared by the settings and the command-line tools, so
 * `--retention d/30` means what `AuditRetention=d/30` means.
 */
export function parseUnitSlashValue(value: string): number | null {
  const match = /^([a-z])\s*\/\s*(\d+)$/i.exec(value.trim());
  if (!match) return null;
  const unit = match[1].toLowerCase();
  const amount = Number(match[2]);
  if (!(unit in UNIT_MS) || amount < 1 || amount > 1_000_000) return null;
  return UNIT_MS[unit as IntervalUnit] * amount;
}

class Reader {
  readonly problems: string[] = [];
  constructor(private readonly env: Env) {}

  private raw(name: string): string | undefined {
    const value = this.env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  }

  string(name: string, fallback: string): string;
  string(name: string, fallback: null): string | null;
  string(name: string, fallback: string | null): string | null {
    return this.raw(name) ?? fallback;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (['true', '1'].includes(value.toLowerCase())) return true;
    if (['false', '0'].includes(value.toLowerCase())) return false;
    this.problems.push(`${name}: expected True, False, true, false, 1 or 0, got "${value}"`);
    return fallback;
  }

  int(name: string, fallback: number, min: number, max: number): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      this.problems.push(`${name}: expected a whole number from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return Number(value);
  }

  interval(unitName: string, valueName: string, fallbackUnit: IntervalUnit, fallbackValue: number): number {
    const unit = (this.raw(unitName) ?? fallbackUnit).toLowerCase();
    if (!(unit in UNIT_MS)) {
      this.problems.push(`${unitName}: expected one of s, n, h, d, got "${unit}"`);
      return UNIT_MS[fallbackUnit] * fallbackValue;
    }
    const value = this.int(valueName, fallbackValue, 1, 1_000_000);
    return UNIT_MS[unit as IntervalUnit] * value;
  }

  /**
   * An interval written `unit/value` in one variable, as the contract writes defaults (`d/30`), or
   * the unit alone with `<name>Value` beside it, like the other interval settings.
   */
  unitSlashValue(name: string, fallbackUnit: IntervalUnit, fallbackValue: number): number {
    const value = this.raw(name);
    const match = value === undefined ? null : /^([a-z])\s*\/\s*(\d+)$/i.exec(value);
    if (!match) return this.interval(name, `${name}Value`, fallbackUnit, fallbackValue);
    const ms = parseUnitSlashValue(value!);
    if (ms === null) {
      this.problems.push(`${name}: expected unit/value with a unit of s, n, h, d and a value from 1 to 1000000, got "${value}"`);
      return UNIT_MS[fallbackUnit] * fallbackValue;
    }
    return ms;
  }

  /**
   * A retention period: `unit/value` like the other durations (`d/365`), or `0` for "keep for ever"
   * (also the meaning of a null fallback when the variable is not set).
   */
  retention(name: string, fallback: { unit: IntervalUnit; value: number } | null): number {
    const value = this.raw(name);
    if (value === undefined) return fallback ? UNIT_MS[fallback.unit] * fallback.value : 0;
    if (value.trim() === '0') return 0;
    return this.unitSlashValue(name, fallback?.unit ?? 'd', fallback?.value ?? 1);
  }

  url(name: string, protocols: string[]): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    try {
      const parsed = new URL(value);
      if (!protocols.includes(parsed.protocol)) throw new Error('protocol');
      return value;
    } catch {
      this.problems.push(`${name}: expected a ${protocols.map((p) => p.replace(':', '://')).join(' or ')} URL`);
      return null;
    }
  }

  /** A Redis or Sentinel URL (redis-connection-string.ts), checked whole; kept as written. */
  redis(name: string): string | null {
    const value = this.raw(name);
    if (value === undefined) return null;
    const parsed = parseRedisConnectionString(value);
    if ('problem' in parsed) {
      this.problems.push(`${name}: ${parsed.problem}`);
      return null;
    }
    return value;
  }

  /** `count/window`, e.g. `20/5n` (20 failed sign-ins per 5 minutes), or `0` for off. */
  signInThrottle(name: string, fallback: SignInThrottleSetting): SignInThrottleSetting | null {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (value === '0') return null;
    const match = /^(\d+)\s*\/\s*(\d+)\s*([a-z])$/i.exec(value);
    const unit = match?.[3].toLowerCase();
    if (!match || !(unit! in UNIT_MS) || Number(match[2]) < 1 || Number(match[2]) > 1_000_000 || Number(match[1]) > 1_000_000) {
      this.problems.push(`${name}: expected count/interval such as 20/5n (units s, n, h, d), or 0 for off, got "${value}"`);
      return fallback;
    }
    if (Number(match[1]) === 0) return null;
    return { limit: Number(match[1]), windowMs: Number(match[2]) * UNIT_MS[unit as IntervalUnit] };
  }

  trustProxy(name: string): TrustProxy {
    const parsed = parseTrustProxy(this.raw(name));
    if (typeof parsed === 'object' && !Array.isArray(parsed)) {
      this.problems.push(parsed.problem);
      return false;
    }
    return parsed;
  }

  /** One of `choices`, case-insensitive. */
  oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const value = this.raw(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if ((choices as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}: expected one of ${choices.join(', ')}, got "${value}"`);
    return fallback;
  }

  /** A comma list of web origins (scheme://host[:port], nothing after), kept as the URL standard writes them. */
  origins(name: string, fallback: string): string[] {
    const entries = (this.raw(name) ?? fallback).split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    const origins: string[] = [];
    for (const entry of entries) {
      let origin: string | null = null;
      try {
        const url = new URL(entry);
        if ((url.protocol === 'https:' || url.protocol === 'http:') && url.origin === entry.replace(/\/$/, '').toLowerCase()) origin = url.origin;
      } catch {
        origin = null;
      }
      if (origin === null) this.problems.push(`${name}: expected a comma list of origins such as https://host:port, got "${entry.slice(0, 200)}"`);
      else origins.push(origin);
    }
    if (entries.length === 0) this.problems.push(`${name}: expected at least one origin`);
    return origins;
  }

  /** PEM given in one line with literal "\n" sequences standing for newlines (contract 12). */
  pem(name: string): string | null {
    const value = this.raw(name);
    return value === undefined ? null : value.replace(/\\n/g, '\n');
  }
}

/** Parses the environment into Settings, or throws SettingsError listing every bad variable. */
export function loadSettings(env: Env): Settings {
  const r = new Reader(env);
  const production = (env.NODE_ENV ?? '').trim() === 'production';
  const logLevel = (r.string('LogLevel', 'log') as string).toLowerCase();
  const logLevels = ['error', 'warn', 'log', 'debug', 'verbose'];
  if (!logLevels.includes(logLevel)) r.problems.push(`LogLevel: expected one of ${logLevels.join(', ')}`);
  const logFormat = (r.string('LogFormat', 'text') as string).toLowerCase();
  if (!['text', 'json'].includes(logFormat)) r.problems.push('LogFormat: expected text or json');

  const port = r.int('Port', 5001, 0, 65535);
  const settings: Settings = {
    production,
    port,
    bindAddress: r.string('BindAddress', null),
    connectionString: r.url('ConnectionString', ['postgres:', 'postgresql:']),
    dataDirectory: r.string('DataDirectory', './data'),
    databasePoolIdleTimeoutMs: r.int('DatabasePoolIdleTimeoutMilliseconds', 30_000, 0, 86_400_000),
    redisConnectionString: r.redis('RedisConnectionString'),
    administratorInitialPassword: r.string('AdministratorInitialPassword', 'Administrator'),
    instance: r.string('Instance', hostname()),
    logLevel: (logLevels.includes(logLevel) ? logLevel : 'log') as Settings['logLevel'],
    logFormat: logFormat === 'json' ? 'json' : 'text',

    jwtKey: r.string('JwtKey', null),
    apiHmacKey: r.string('ApiHmacKey', null),
    passwordHashingKey: r.string('PasswordHashingKey', null),
    jwtIssuer: r.string('JwtIssuer', 'transaction-monitoring'),
    jwtAudience: r.string('JwtAudience', 'transaction-monitoring'),

    auditSigningKey: r.pem('AuditSigningKey'),
    auditLogOrigin: r.string('AuditLogOrigin', null),
    auditSealIntervalMs: r.unitSlashValue('AuditSealInterval', 's', 1),
    securitySinkCaFile: r.string('SecuritySinkCaFile', null),

    secureHttpCookie: r.bool('SecureHttpCookie', false),
    trustProxy: r.trustProxy('TrustProxy'),
    sessionCookie: r.bool('SessionCookie', true),
    csrfOriginCheck: r.bool('CsrfOriginCheck', true),
    sessionAbsoluteLifetimeMs: r.interval('SessionAbsoluteLifetimeInterval', 'SessionAbsoluteLifetimeIntervalValue', 'n', 720),
    revokedSessionCheckMs: r.interval('RevokedSessionCheckInterval', 'RevokedSessionCheckIntervalValue', 's', 30),
    sessionRetentionMs: r.unitSlashValue('SessionRetention', 'd', 30),
    auditRetentionMs: r.retention('AuditRetention', null),
    telemetryRetentionMs: r.retention('TelemetryRetention', { unit: 'd', value: 30 }),

    signInThrottle: r.signInThrottle('SignInThrottle', { limit: 20, windowMs: 5 * UNIT_MS.n }),
    passwordAttempts: r.int('PasswordAttempts', 3, 1, 1000),
    passwordExpiryDays: r.int('PasswordExpiryDays', 90, 1, 36500),
    passwordAsymmetricEncryption: r.bool('PasswordAsymmetricEncryption', false),
    passwordAsymmetricEncryptionPublicKey: r.pem('PasswordAsymmetricEncryptionPublicKey'),
    passwordAsymmetricEncryptionPrivateKey: r.pem('PasswordAsymmetricEncryptionPrivateKey'),

    oauthAuthentication: r.bool('OAuthAuthentication', false),
    oauthAuthority: r.url('OAuthAuthority', ['https:', 'http:']),
    oauthClientId: r.string('OAuthClientId', null),
    oauthClientSecret: r.string('OAuthClientSecret', null),
    oauthForceGet: r.bool('OAuthForceGet', false),
    oauthForceRedirect: r.string('OAuthForceRedirect', null),
    oauthRedirectUri: r.url('OAuthRedirectUri', ['https:', 'http:']),

    negotiateAuthentication: r.bool('NegotiateAuthentication', false),

    passkeys: r.bool('Passkeys', true),
    passkeyRelyingPartyId: r.string('PasskeyRelyingPartyId', 'localhost').toLowerCase(),
    passkeyOrigins: r.origins('PasskeyOrigins', `http://localhost:${port}`),
    passkeyUserVerification: r.oneOf('PasskeyUserVerification', ['required', 'preferred'] as const, 'required'),
    passkeyDeviceBoundOnly: r.bool('PasskeyDeviceBoundOnly', false),

    enableMultifactorAuthentication: r.bool('EnableMultifactorAuthentication', false),
    multifactorAuthenticationEndpoint: r.url('MultifactorAuthenticationEndpoint', ['https:', 'http:']),
    multifactorAuthenticationApplicationId: r.string('MultifactorAuthenticationApplicationId', 'TransactionMonitoring'),
    multifactorAuthenticationClientKey: r.string('MultifactorAuthenticationClientKey', DEFAULT_MFA_CLIENT_KEY),
    outboundHttpMfaCertificateBypass: r.bool('OutboundHttpMfaCertificateBypass', false),
    outboundHttpMfaCertificateThumbprint: r.string('OutboundHttpMfaCertificateThumbprint', null),

    archiverWarnThresholdMilliseconds: r.int('ArchiverWarnThresholdMilliseconds', 10_000, 0, 86_400_000),
    caseCreationWarnThresholdMilliseconds: r.int('CaseCreationWarnThresholdMilliseconds', 10_000, 0, 86_400_000),
    enableOpenTelemetry: r.bool('EnableOpenTelemetry', false),
    otlpEndpoint: r.url('OTEL_EXPORTER_OTLP_ENDPOINT', ['https:', 'http:']),
    otlpHeaders: r.string('OTEL_EXPORTER_OTLP_HEADERS', null),
    otlpExportIntervalMs: r.int('OTEL_METRIC_EXPORT_INTERVAL', 60_000, 1000, 86_400_000),

    databaseConnectTimeoutMs: r.int('DatabaseConnectTimeoutMilliseconds', 2000, 100, 60_000),
    databaseQueryTimeoutMs: r.int('DatabaseQueryTimeoutMilliseconds', 3000, 200, 600_000),
    redisCommandTimeoutMs: r.int('RedisCommandTimeoutMilliseconds', 2000, 100, 60_000),
    negotiateTimeoutMs: r.int('NegotiateTimeoutMilliseconds', 2000, 100, 60_000),
    redisChannelPrefix: r.string('RedisChannelPrefix', ''),
  };

  if (settings.jwtKey !== null && Buffer.byteLength(settings.jwtKey, 'utf8') < 32) {
    r.problems.push('JwtKey: must be at least 32 bytes');
  }
  if (settings.apiHmacKey !== null && Buffer.byteLength(settings.apiHmacKey, 'utf8') < 16) {
    r.problems.push('ApiHmacKey: must be at least 16 bytes');
  }
  if (settings.auditSigningKey !== null) {
    const problem = ed25519KeyProblem(settings.auditSigningKey);
    if (problem) r.problems.push(`AuditSigningKey: ${problem}`);
  }
  // A note's origin is one line of printable text (C2SP signed-note); '+' would break the verifier key.
  if (settings.auditLogOrigin !== null && !/^[\x21-\x2a\x2c-\x7e]{1,200}$/.test(settings.auditLogOrigin)) {
    r.problems.push('AuditLogOrigin: expected 1 to 200 printable characters without spaces or "+"');
  }
  if (production) {
    if (settings.jwtKey === null) r.problems.push('JwtKey: required when NODE_ENV=production');
    if (settings.apiHmacKey === null) r.problems.push('ApiHmacKey: required when NODE_ENV=production');
    if (settings.auditSigningKey === null) r.problems.push('AuditSigningKey: required when NODE_ENV=production');
  }
  if (settings.passwordAsymmetricEncryption) {
    if (!settings.passwordAsymmetricEncryptionPublicKey) {
      r.problems.push('PasswordAsymmetricEncryptionPublicKey: required when PasswordAsymmetricEncryption is True');
    }
    if (!settings.passwordAsymmetricEncryptionPrivateKey) {
      r.problems.push('PasswordAsymmetricEncryptionPrivateKey: required when PasswordAsymmetricEncryption is True');
    }
  }
  if (settings.oauthAuthentication && settings.negotiateAuthentication) {
    r.problems.push('OAuthAuthentication: cannot be True together with NegotiateAuthentication');
  }
  if (settings.oauthAuthentication) {
    if (!settings.oauthAuthority) r.problems.push('OAuthAuthority: required when OAuthAuthentication is True');
    if (!settings.oauthClientId) r.problems.push('OAuthClientId: required when OAuthAuthentication is True');
  }
  if (settings.oauthAuthority) {
    const authority = new URL(settings.oauthAuthority);
    if (authority.protocol === 'http:' && !isLoopbackHost(authority.hostname)) {
      r.problems.push('OAuthAuthority: http:// is accepted only for a loopback host');
    }
  }
  if (settings.oauthForceRedirect && !/^(https?:\/\/|\/(?![/\\]))/i.test(settings.oauthForceRedirect)) {
    r.problems.push('OAuthForceRedirect: expected an absolute http(s) URL or a local path');
  }
  if (
    settings.outboundHttpMfaCertificateThumbprint &&
    !/^[0-9a-f]{40}$/i.test(settings.outboundHttpMfaCertificateThumbprint.replace(/[:\s]/g, ''))
  ) {
    r.problems.push('OutboundHttpMfaCertificateThumbprint: expected a SHA-1 thumbprint (40 hex digits)');
  }

  // WebAuthn takes a host name as relying party id, never an address, a port or a path.
  if (!/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(settings.passkeyRelyingPartyId) || isIP(settings.passkeyRelyingPartyId) !== 0) {
    r.problems.push('PasskeyRelyingPartyId: expected a host name such as example.com (no scheme, port or address)');
  }
  for (const origin of settings.passkeyOrigins) {
    const host = new URL(origin).hostname;
    if (host !== settings.passkeyRelyingPartyId && !host.endsWith(`.${settings.passkeyRelyingPartyId}`)) {
      r.problems.push(`PasskeyOrigins: ${origin} is not within PasskeyRelyingPartyId ${settings.passkeyRelyingPartyId}`);
    }
    if (new URL(origin).protocol === 'http:' && !isLoopbackHost(host)) r.problems.push(`PasskeyOrigins: http:// is accepted only for a loopback host (${origin})`);
  }

  if (!/^[\x21-\x7e]{0,64}$/.test(settings.redisChannelPrefix)) {
    r.problems.push('RedisChannelPrefix: expected at most 64 printable characters without spaces');
  }

  if (r.problems.length > 0) throw new SettingsError(r.problems);
  return settings;
}

/** Why `pem` is not an Ed25519 private key in PKCS#8 PEM, or null when it is. */
export function ed25519KeyProblem(pem: string): string | null {
  try {
    const key = createPrivateKey({ key: pem, format: 'pem' });
    return key.asymmetricKeyType === 'ed25519' ? null : `expected an Ed25519 key, got ${key.asymmetricKeyType}`;
  } catch {
    return 'expected an Ed25519 private key in PKCS#8 PEM (a literal \\n for each newline)';
  }
}

export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
