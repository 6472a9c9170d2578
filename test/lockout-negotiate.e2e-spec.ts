import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { Kdc, startKdc } from './helpers/kdc';
import { RIGHT_PASSCODE, startCountingMfaProvider, startGatedMfaProvider } from './helpers/mfa-provider';
import { insertUser } from './helpers/users';
import { loadKerberos } from '../src/login/negotiate-acceptor';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

/**
 * Contract 13 on the Negotiate path: the passcode posted to ByNegotiateMfa is counted before the
 * provider is asked, so a burst of passcodes (each under its own, valid Kerberos handshake) reaches
 * the provider at most PasswordAttempts + 1 times, and the right passcode inside it yields no token.
 * A real MIT KDC on loopback issues the tickets (own file: GSSAPI reads its environment once).
 */
interface KerberosClient {
  step(challenge: string): Promise<string>;
}
let kerberos: {
  initializeClient(service: string, options: { principal: string; mechOID: number }): Promise<KerberosClient>;
  GSS_MECH_OID_SPNEGO: number;
};
let kdc: Kdc;

async function negotiate(principal: string): Promise<Record<string, string>> {
  const client = await kerberos.initializeClient('HTTP@localhost', { principal: `${principal}@${kdc.realm}`, mechOID: kerberos.GSS_MECH_OID_SPNEGO });
  return { authorization: `Negotiate ${await client.step('')}` };
}

beforeAll(async () => {
  kdc = await startKdc();
  kdc.exportEnvironment();
  for (const principal of ['burst', 'steady', 'walker', 'racer']) kdc.addUser(principal, `pw-${principal}-0123`);
  // The one evaluation of the package shared by the process (a second require() would wrap its
  // wrappers again and every step would hang; see loadKerberos).
  kerberos = loadKerberos();
});
afterAll(async () => kdc?.stop());

describe('Negotiate passcode lockout under a concurrent burst (contract 13)', () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startCountingMfaProvider>>;
  beforeAll(async () => {
    provider = await startCountingMfaProvider();
    t = await startTestApp({
      env: { NegotiateAuthentication: 'True', EnableMultifactorAuthentication: 'True', MultifactorAuthenticationEndpoint: provider.url },
    });
  });
  afterAll(async () => {
    await t.close();
    await provider.close();
  });

  const failureTypes = (name: string) =>
    t.db
      .query<{ FailureTypeId: number | null; AuthenticationTypeId: number }>(
        `SELECT "FailureTypeId", "AuthenticationTypeId" FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`,
        [name],
      )
      .then((rows) => rows.map((r) => r.FailureTypeId));

  it('12 wrong passcodes and the right one at once: at most four reach the provider, none signs in, the account locks', async () => {
    const { id } = await insertUser(t, { name: 'burst' });
    const passcodes = Array.from({ length: 12 }, (_, i) => String(90000000 + i));
    passcodes.splice(4, 0, RIGHT_PASSCODE);
    const handshakes = await Promise.all(passcodes.map(() => negotiate('burst')));
    const before = provider.calls();
    const answers = await Promise.all(
      passcodes.map((mfa, i) => new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa }, handshakes[i])),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Negotiate');
      expect(answer.setCookies).toEqual([]);
    }
    const asked = provider.calls() - before;
    expect(asked).toBeLessThanOrEqual(4);
    const types = await failureTypes('burst');
    expect(types).toHaveLength(13);
    expect(types.every((type) => type === 11 || type === 3)).toBe(true);
    expect(types.filter((type) => type === 11).length).toBeLessThanOrEqual(asked);
    const [row] = await t.db.query<{ PasswordLocked: boolean; LastLoginDate: Date | null }>(
      `SELECT "PasswordLocked", "LastLoginDate" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    );
    expect(row).toEqual({ PasswordLocked: true, LastLoginDate: null });
  });

  it('sequentially: three wrong passcodes, then the right one signs in and resets the count', async () => {
    const { id } = await insertUser(t, { name: 'steady' });
    for (let i = 0; i < 3; i++) {
      expect((await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: '00000000' }, await negotiate('steady'))).status).toBe(401);
    }
    const right = await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: RIGHT_PASSCODE }, await negotiate('steady'));
    expect(right.status).toBe(200);
    expect(await failureTypes('steady')).toEqual([11, 11, 11, null]);
    const [row] = await t.db.query<{ FailedPasswordCount: number; PasswordLocked: boolean }>(
      `SELECT "FailedPasswordCount", "PasswordLocked" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    );
    expect(row).toEqual({ FailedPasswordCount: 0, PasswordLocked: false });
  });
});

describe('Negotiate: the right passcode racing the lock (contract 13)', () => {
  let t: TestApp;
  let provider: Awaited<ReturnType<typeof startGatedMfaProvider>>;
  beforeAll(async () => {
    provider = await startGatedMfaProvider();
    t = await startTestApp({
      env: { NegotiateAuthentication: 'True', EnableMultifactorAuthentication: 'True', MultifactorAuthenticationEndpoint: provider.url },
    });
  });
  afterAll(async () => {
    provider.open();
    await t.close();
    await provider.close();
  });

  const state = (id: number) =>
    t.db
      .query<{ PasswordLocked: boolean; FailedPasswordCount: number; LastLoginDate: Date | null }>(
        `SELECT "PasswordLocked", "FailedPasswordCount", "LastLoginDate" FROM "UserRegistry" WHERE "Id" = $1`,
        [id],
      )
      .then((rows) => rows[0]);
  const types = (name: string) =>
    t.db
      .query<{ FailureTypeId: number | null }>(`SELECT "FailureTypeId" FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`, [name])
      .then((rows) => rows.map((r) => r.FailureTypeId));

  it('sent while four wrong passcodes are at the provider: refused (3) without asking it, the account locks, the count says four', async () => {
    // Four wrong passcodes hold every place; the right one arrives next.
    const racer = await insertUser(t, { name: 'racer' });
    const handshakes = await Promise.all(Array.from({ length: 5 }, () => negotiate('racer')));
    const wrong = ['90000001', '90000002', '90000003', '90000004'].map((mfa, i) =>
      new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa }, handshakes[i]),
    );
    await provider.waiting(4);
    const right = await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: RIGHT_PASSCODE }, handshakes[4]);
    expect(right.status).toBe(401);
    expect(right.setCookies).toEqual([]);
    provider.open();
    for (const answer of await Promise.all(wrong)) expect(answer.status).toBe(401);
    expect(provider.asked()).not.toContain(RIGHT_PASSCODE);
    expect((await types('racer')).map(String).sort()).toEqual(['11', '11', '11', '11', '3']);
    expect(await state(racer.id)).toEqual({ PasswordLocked: true, FailedPasswordCount: 4, LastLoginDate: null });
  });
});

describe('SignInThrottle on ByNegotiate (contract 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { NegotiateAuthentication: 'True', SignInThrottle: '3/5n' } });
    await insertUser(t, { name: 'walker' });
  });
  afterAll(async () => t.close());

  it('does not count the challenge leg, counts refused tickets, then answers 429 without accepting a valid ticket', async () => {
    for (let i = 0; i < 5; i++) {
      const challenge = await new Browser(t.url).get('/api/Authentication/ByNegotiate');
      expect(challenge.status).toBe(401);
      expect(challenge.headers.get('www-authenticate')).toBe('Negotiate');
    }
    for (let i = 0; i < 3; i++) {
      expect((await new Browser(t.url).get('/api/Authentication/ByNegotiate', { authorization: 'Negotiate YWJjZGVm' })).status).toBe(401);
    }
    const valid = await new Browser(t.url).get('/api/Authentication/ByNegotiate', await negotiate('walker'));
    expect(valid.status).toBe(429);
    expect(valid.headers.get('retry-after')).toBe('300');
    expect(valid.setCookies).toEqual([]);
    const rows = await t.db.query<{ FailureTypeId: number; AuthenticationTypeId: number; CreatedUser: string | null }>(
      `SELECT "FailureTypeId", "AuthenticationTypeId", "CreatedUser" FROM "UserLogin" ORDER BY "Id"`,
    );
    expect(rows).toEqual([{ FailureTypeId: FailureTypeId.Throttled, AuthenticationTypeId: AuthenticationTypeId.Negotiate, CreatedUser: null }]);
    // The window ends, the same valid ticket kind signs in.
    t.clock.advance(300_000);
    expect((await new Browser(t.url).get('/api/Authentication/ByNegotiate', await negotiate('walker'))).status).toBe(200);
  });
});
