import { generateKeyPairSync } from 'node:crypto';
import { loadSettings, SettingsError } from './settings';

function problems(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
    return [];
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
}

describe('settings (contract 1)', () => {
  it('applies the documented defaults', () => {
    const s = loadSettings({});
    expect(s).toMatchObject({
      port: 5001,
      dataDirectory: './data',
      connectionString: null,
      redisConnectionString: null,
      passwordAttempts: 3,
      sessionCookie: true,
      csrfOriginCheck: true,
      secureHttpCookie: false,
      trustProxy: false,
      sessionAbsoluteLifetimeMs: 720 * 60_000,
      revokedSessionCheckMs: 30_000,
      archiverWarnThresholdMilliseconds: 10_000,
      multifactorAuthenticationClientKey: 'DefaultMultifactorClientKey-ChangeMe',
    });
  });

  it('accepts every boolean spelling and interval unit', () => {
    for (const [text, value] of [['True', true], ['true', true], ['1', true], ['False', false], ['false', false], ['0', false]] as const) {
      expect(loadSettings({ SessionCookie: text }).sessionCookie).toBe(value);
    }
    expect(loadSettings({ SessionAbsoluteLifetimeInterval: 'h', SessionAbsoluteLifetimeIntervalValue: '2' }).sessionAbsoluteLifetimeMs).toBe(7_200_000);
    expect(loadSettings({ RevokedSessionCheckInterval: 'd', RevokedSessionCheckIntervalValue: '1' }).revokedSessionCheckMs).toBe(86_400_000);
  });

  it('reads SessionRetention as unit/value (default d/30) or as a unit with SessionRetentionValue', () => {
    expect(loadSettings({}).sessionRetentionMs).toBe(30 * 86_400_000);
    expect(loadSettings({ SessionRetention: 'd/30' }).sessionRetentionMs).toBe(30 * 86_400_000);
    expect(loadSettings({ SessionRetention: 'h/12' }).sessionRetentionMs).toBe(12 * 3_600_000);
    expect(loadSettings({ SessionRetention: 'n', SessionRetentionValue: '5' }).sessionRetentionMs).toBe(300_000);
    for (const bad of ['x/3', 'd/0', 'd/-1', 'd/abc', 'week']) {
      expect(() => loadSettings({ SessionRetention: bad })).toThrow(/SessionRetention/);
    }
  });

  it('refuses to start listing one line per bad variable', () => {
    expect(problems({ Port: 'eighty', SessionCookie: 'yes', SessionAbsoluteLifetimeInterval: 'w', ConnectionString: 'mysql://x' })).toEqual([
      expect.stringMatching(/^Port:/),
      expect.stringMatching(/^ConnectionString:/),
      expect.stringMatching(/^SessionCookie:/),
      expect.stringMatching(/^SessionAbsoluteLifetimeInterval:/),
    ]);
  });

  it('refuses production without secrets, asymmetric transport without keys, and OAuth with Negotiate', () => {
    expect(problems({ NODE_ENV: 'production' })).toEqual([
      expect.stringMatching(/^JwtKey:/),
      expect.stringMatching(/^ApiHmacKey:/),
      expect.stringMatching(/^AuditSigningKey:/),
    ]);
    expect(problems({ PasswordAsymmetricEncryption: 'True', PasswordAsymmetricEncryptionPublicKey: 'x' })).toEqual([
      expect.stringMatching(/^PasswordAsymmetricEncryptionPrivateKey:/),
    ]);
    expect(problems({ OAuthAuthentication: 'True', NegotiateAuthentication: 'True', OAuthAuthority: 'https://idp.example', OAuthClientId: 'c' })).toEqual([
      expect.stringMatching(/^OAuthAuthentication: cannot be True together with NegotiateAuthentication/),
    ]);
    expect(problems({ JwtKey: 'too-short' })).toEqual([expect.stringMatching(/^JwtKey: must be at least 32 bytes/)]);
    expect(problems({ OAuthAuthority: 'http://idp.example.com' })).toEqual([expect.stringMatching(/^OAuthAuthority: http/)]);
    expect(problems({ OAuthAuthority: 'http://127.0.0.1:4000' })).toEqual([]);
  });

  it('reads SignInThrottle as count/interval (default 20/5n), 0 for off (contract 13)', () => {
    const throttle = (value?: string) => loadSettings(value === undefined ? {} : { SignInThrottle: value }).signInThrottle;
    expect(throttle()).toEqual({ limit: 20, windowMs: 300_000 });
    expect(throttle('0')).toBeNull();
    expect(throttle('0/5n')).toBeNull();
    expect(throttle('5/30s')).toEqual({ limit: 5, windowMs: 30_000 });
    expect(throttle('100 / 1h')).toEqual({ limit: 100, windowMs: 3_600_000 });
    for (const bad of ['20', '20/5', '20/5w', 'x/5n', '20/0n', '-1/5n', 'off']) {
      expect(problems({ SignInThrottle: bad })).toEqual([expect.stringMatching(/^SignInThrottle:/)]);
    }
  });

  it('reads TrustProxy as False, True (one hop), a hop count or a list of addresses and ranges (contract 13)', () => {
    const trust = (value?: string) => loadSettings(value === undefined ? {} : { TrustProxy: value }).trustProxy;
    expect(trust()).toBe(false);
    expect(trust('False')).toBe(false);
    expect(trust('0')).toBe(false);
    expect(trust('True')).toBe(1);
    expect(trust('true')).toBe(1);
    expect(trust('1')).toBe(1);
    expect(trust('3')).toBe(3);
    expect(trust('10.0.0.0/8, 192.0.2.7,2001:db8::/32 , ::1')).toEqual(['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '::1']);
    for (const bad of ['yes', '-1', '33', '1.5', '10.0.0.0/33', '300.1.1.1', 'proxy.example', '10.0.0.0/8,,', 'loopback', '2001:db8::/129', '10.0.0.0/']) {
      const found = problems({ TrustProxy: bad });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/^TrustProxy:/);
    }
  });

  it('reads PEM keys with literal \\n as newlines', () => {
    const s = loadSettings({
      PasswordAsymmetricEncryption: 'True',
      PasswordAsymmetricEncryptionPublicKey: '-----BEGIN PUBLIC KEY-----\\nAAA\\n-----END PUBLIC KEY-----',
      PasswordAsymmetricEncryptionPrivateKey: 'x',
    });
    expect(s.passwordAsymmetricEncryptionPublicKey).toBe('-----BEGIN PUBLIC KEY-----\nAAA\n-----END PUBLIC KEY-----');
  });

  it('reads the audit log settings (contract 15): an Ed25519 PKCS#8 key with literal \\n, the origin, the seal interval', () => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const s = loadSettings({ AuditSigningKey: pem.trim().replace(/\n/g, '\\n'), AuditLogOrigin: 'bank.example/audit', AuditSealInterval: 's/5' });
    expect(s.auditSigningKey).toBe(pem.trim());
    expect(s.auditLogOrigin).toBe('bank.example/audit');
    expect(s.auditSealIntervalMs).toBe(5000);
    expect(loadSettings({})).toMatchObject({ auditSigningKey: null, auditLogOrigin: null, auditSealIntervalMs: 1000 });
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    expect(problems({ AuditSigningKey: rsa })).toEqual(['AuditSigningKey: expected an Ed25519 key, got rsa']);
    expect(problems({ AuditSigningKey: 'not a key' })).toEqual([expect.stringMatching(/^AuditSigningKey: expected an Ed25519 private key in PKCS#8 PEM/)]);
    expect(problems({ AuditLogOrigin: 'a+b' })).toEqual([expect.stringMatching(/^AuditLogOrigin:/)]);
    expect(problems({ AuditLogOrigin: 'with space' })).toEqual([expect.stringMatching(/^AuditLogOrigin:/)]);
    expect(problems({ AuditSealInterval: 's/0' })).toEqual([expect.stringMatching(/^AuditSealInterval:/)]);
  });

  it('requires AuditSigningKey in production, like JwtKey', () => {
    expect(problems({ NODE_ENV: 'production', JwtKey: 'x'.repeat(32), ApiHmacKey: 'y'.repeat(16) })).toEqual(['AuditSigningKey: required when NODE_ENV=production']);
  });
});
