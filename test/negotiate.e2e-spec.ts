import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { Kdc, startKdc } from './helpers/kdc';
import { insertUser } from './helpers/users';
import { openSessionOf, sessionRowOf, sessionRowsOf } from './helpers/user-sessions';
import { loadKerberos } from '../src/login/negotiate-acceptor';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

/**
 * Negotiate sign-in against a real MIT KDC on loopback, with a real Kerberos client (the kerberos
 * module's initializeClient) producing SPNEGO tokens for HTTP/localhost.
 */
interface KerberosClient {
  step(challenge: string): Promise<string>;
  contextComplete: boolean;
}
let kerberos: {
  initializeClient(service: string, options: { principal: string; mechOID: number }): Promise<KerberosClient>;
  GSS_MECH_OID_SPNEGO: number;
};

const PASSCODE = '12345678';
let kdc: Kdc;

/** A fresh SPNEGO initiator for the principal, and its first token. */
async function initiate(principal: string): Promise<{ client: KerberosClient; token: string }> {
  const client = await kerberos.initializeClient('HTTP@localhost', {
    principal: `${principal}@${kdc.realm}`,
    mechOID: kerberos.GSS_MECH_OID_SPNEGO,
  });
  return { client, token: await client.step('') };
}

const negotiate = async (principal: string) => ({ authorization: `Negotiate ${(await initiate(principal)).token}` });

beforeAll(async () => {
  kdc = await startKdc();
  kdc.exportEnvironment();
  for (const principal of ['alice', 'bob', 'carol', 'dave', 'nobody', 'erin', 'frank']) kdc.addUser(principal, `pw-${principal}-0123`);
  // The same once-per-process load as the service: evaluating the package's JavaScript a second time
  // in this process (another test file's registry) would leave every step unsettled.
  kerberos = loadKerberos();
});
afterAll(async () => kdc?.stop());

const logins = (t: TestApp, name: string) =>
  t.db.query<{ Failed: boolean; FailureTypeId: number | null; FailureMessage: string | null; AuthenticationTypeId: number; CreatedUser: string }>(
    `SELECT "Failed", "FailureTypeId", "FailureMessage", "AuthenticationTypeId", "CreatedUser" FROM "UserLogin"
      WHERE lower("CreatedUser") = lower($1) ORDER BY "Id"`,
    [name],
  );

describe('Negotiate sign-in (service.md 5.2, contract 12)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { NegotiateAuthentication: 'True' } });
  });
  afterAll(async () => t.close());

  it('starts the handshake: 401 with WWW-Authenticate: Negotiate and no row', async () => {
    const res = await new Browser(t.url).get('/api/Authentication/ByNegotiate');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Negotiate');
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.setCookies).toEqual([]);
    expect(await t.db.query(`SELECT 1 FROM "UserLogin"`)).toEqual([]);
  });

  it('refuses a token that is not a valid ticket, and a non-Negotiate scheme, with a new challenge', async () => {
    const browser = new Browser(t.url);
    for (const authorization of ['Negotiate YWJjZGVmZ2hpamtsbW5vcA==', 'Basic YWxpY2U6cGFzc3dvcmQ=', 'Negotiate !!!']) {
      const res = await browser.get('/api/Authentication/ByNegotiate', { authorization });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Negotiate');
    }
    expect(await t.db.query(`SELECT 1 FROM "UserLogin"`)).toEqual([]);
  });

  it('signs in a Kerberos user: 200 with the token body, both cookies, the mutual-authentication token, a row of type 2', async () => {
    const user = await insertUser(t, { name: 'alice' });
    const browser = new Browser(t.url);
    const { client, token } = await initiate('alice');
    const res = await browser.get('/api/Authentication/ByNegotiate', { authorization: `Negotiate ${token}` });
    expect(res.status).toBe(200);
    expect(typeof res.json.token).toBe('string');
    expect(new Date(res.json.expiration).getTime()).toBeGreaterThan(t.clock.nowMs());
    const names = res.setCookies.map((line) => parseSetCookie(line).name);
    expect(names).toEqual(expect.arrayContaining(['authentication-jwt', 'authentication-expiry']));

    // The server's final token completes the client's context (mutual authentication).
    const final = /^Negotiate (\S+)$/.exec(res.headers.get('www-authenticate') ?? '');
    expect(final).not.toBeNull();
    await client.step(final![1]);
    expect(client.contextComplete).toBe(true);

    expect(await logins(t, 'alice')).toEqual([
      { Failed: false, FailureTypeId: null, FailureMessage: null, AuthenticationTypeId: AuthenticationTypeId.Negotiate, CreatedUser: 'alice' },
    ]);
    // The session row of contract 14, named by the token's sid.
    expect(await sessionRowOf(t, res.json.token)).toMatchObject(openSessionOf(user, AuthenticationTypeId.Negotiate, t.clock.nowMs()));
    expect(await sessionRowsOf(t, user.id)).toHaveLength(1);
    const session = await browser.get('/api/Authentication/Session');
    expect(session.json).toMatchObject({ userName: 'alice', authenticationType: 'Cookie' });
  });

  it('matches the principal to the user name case-insensitively, realm stripped; CreatedUser is the name as matched', async () => {
    await insertUser(t, { name: 'Bob' });
    const res = await new Browser(t.url).get('/api/Authentication/ByNegotiate', await negotiate('bob'));
    expect(res.status).toBe(200);
    expect(await logins(t, 'bob')).toEqual([expect.objectContaining({ Failed: false, AuthenticationTypeId: AuthenticationTypeId.Negotiate, CreatedUser: 'Bob' })]);
  });

  it('refuses a replayed token', async () => {
    await insertUser(t, { name: 'frank' });
    const headers = await negotiate('frank');
    const browser = new Browser(t.url);
    expect((await browser.get('/api/Authentication/ByNegotiate', headers)).status).toBe(200);
    const replay = await new Browser(t.url).get('/api/Authentication/ByNegotiate', headers);
    expect(replay.status).toBe(401);
    expect(replay.setCookies).toEqual([]);
  });

  it('a principal without a user writes FailureTypeId 1, an inactive user 2, a locked one 3; FailureMessage null; 401', async () => {
    await insertUser(t, { name: 'carol', active: false });
    const { id } = await insertUser(t, { name: 'dave' });
    await t.db.query(`UPDATE "UserRegistry" SET "PasswordLocked" = true WHERE "Id" = $1`, [id]);
    const cases: [string, number][] = [['nobody', 1], ['carol', 2], ['dave', 3]];
    for (const [principal, failureTypeId] of cases) {
      const res = await new Browser(t.url).get('/api/Authentication/ByNegotiate', await negotiate(principal));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Negotiate');
      expect(res.setCookies).toEqual([]);
      expect(await logins(t, principal)).toEqual([
        { Failed: true, FailureTypeId: failureTypeId, FailureMessage: null, AuthenticationTypeId: AuthenticationTypeId.Negotiate, CreatedUser: principal },
      ]);
    }
  });

  it('disables every username/password route (404), even for a signed-in caller', async () => {
    await insertUser(t, { name: 'erin', password: 'Corr3ct-Horse-Battery' });
    const browser = new Browser(t.url);
    const byPassword = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'erin', password: 'Corr3ct-Horse-Battery' });
    expect(byPassword.status).toBe(404);
    expect(await logins(t, 'erin')).toEqual([]);
    expect((await browser.get('/api/Authentication/ByNegotiate', await negotiate('erin'))).status).toBe(200);
    const change = await browser.post('/api/Authentication/ChangePassword', {
      password: 'Corr3ct-Horse-Battery',
      newPassword: 'An0ther-Horse-Battery',
      repeatNewPassword: 'An0ther-Horse-Battery',
    });
    expect(change.status).toBe(404);
  });

  it('has no second-factor route while the second factor is off', async () => {
    const res = await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: PASSCODE }, await negotiate('alice'));
    expect(res.status).toBe(404);
  });
});

describe('Negotiate sign-in with the second factor (contract 7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { NegotiateAuthentication: 'True', EnableMultifactorAuthentication: 'True' } });
  });
  afterAll(async () => t.close());

  it('answers 202 to the handshake, then 200 to ByNegotiateMfa under a new handshake with the right passcode', async () => {
    const user = await insertUser(t, { name: 'alice' });
    const browser = new Browser(t.url);
    const first = await browser.get('/api/Authentication/ByNegotiate', await negotiate('alice'));
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ mfaRequired: true });
    expect(first.setCookies).toEqual([]);
    expect(await logins(t, 'alice')).toEqual([]);
    expect(await sessionRowsOf(t, user.id)).toEqual([]);

    const second = await browser.post('/api/Authentication/ByNegotiateMfa', { mfa: PASSCODE }, await negotiate('alice'));
    expect(second.status).toBe(200);
    expect(typeof second.json.token).toBe('string');
    expect(await sessionRowOf(t, second.json.token)).toMatchObject(openSessionOf(user, AuthenticationTypeId.Negotiate, t.clock.nowMs()));
    expect(await sessionRowsOf(t, user.id)).toHaveLength(1);
    expect(browser.cookies.has('authentication-jwt')).toBe(true);
    expect(await logins(t, 'alice')).toEqual([expect.objectContaining({ Failed: false, FailureTypeId: null, AuthenticationTypeId: AuthenticationTypeId.Negotiate })]);
  });

  it('refuses the passcode without a handshake (401 Negotiate), and a malformed body (400)', async () => {
    const browser = new Browser(t.url);
    const bare = await browser.post('/api/Authentication/ByNegotiateMfa', { mfa: PASSCODE });
    expect(bare.status).toBe(401);
    expect(bare.headers.get('www-authenticate')).toBe('Negotiate');
    expect((await browser.post('/api/Authentication/ByNegotiateMfa', {}, await negotiate('alice'))).status).toBe(400);
  });

  it('a wrong passcode is 401 with FailureTypeId 11; wrong passcodes lock the account (the locking attempt writes 11, then 3)', async () => {
    const { id } = await insertUser(t, { name: 'bob' });
    for (let i = 0; i < 4; i++) {
      const res = await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: '00000000' }, await negotiate('bob'));
      expect(res.status).toBe(401);
      expect(res.setCookies).toEqual([]);
    }
    const [state] = await t.db.query<{ PasswordLocked: boolean }>(`SELECT "PasswordLocked" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(state.PasswordLocked).toBe(true);
    const locked = await new Browser(t.url).post('/api/Authentication/ByNegotiateMfa', { mfa: PASSCODE }, await negotiate('bob'));
    expect(locked.status).toBe(401);
    const rows = await logins(t, 'bob');
    expect(rows.map((row) => row.FailureTypeId)).toEqual([...Array(4).fill(FailureTypeId.SecondFactorRejected), FailureTypeId.PasswordLocked]);
    expect(rows.every((row) => row.FailureMessage === null && row.AuthenticationTypeId === AuthenticationTypeId.Negotiate)).toBe(true);
  });
});

describe('a Kerberos acceptor that never answers (contract 13: every wait has a deadline)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { NegotiateAuthentication: 'True', NegotiateTimeoutMilliseconds: '500' } });
  });
  afterAll(async () => t.close());

  it('answers 503 within the deadline instead of hanging, bounds the acceptor calls, and keeps serving', async () => {
    await insertUser(t, { name: 'alice' });
    const tokens = await Promise.all([1, 2, 3, 4].map(() => negotiate('alice')));
    // Evaluating the package's JavaScript again wraps the already wrapped prototype methods (what a second
    // module registry did): every acceptor step from now on returns a promise that never settles.
    const { KerberosServer, KerberosClient } = require('kerberos/lib/util').loadBindings();
    const saved = [KerberosServer.prototype.step, KerberosClient.prototype.step];
    jest.isolateModules(() => require('kerberos'));
    try {
      expect(KerberosServer.prototype.step).not.toBe(saved[0]);
      const started = Date.now();
      const answers = await Promise.all(tokens.slice(0, 3).map((headers) => new Browser(t.url).get('/api/Authentication/ByNegotiate', headers)));
      expect(answers.map((res) => res.status)).toEqual([503, 503, 503]);
      expect(answers.every((res) => res.headers.get('content-type')?.startsWith('application/problem+json'))).toBe(true);
      expect(answers.flatMap((res) => res.setCookies)).toEqual([]);
      // Three attempts, two slots: each waited at most its own 500 ms deadline (generous bound for a busy machine).
      expect(Date.now() - started).toBeLessThan(5000);
      // The two stuck calls keep their slots: a further attempt is refused at its deadline, not queued for ever.
      const again = await new Browser(t.url).get('/api/Authentication/ByNegotiate', tokens[3]);
      expect(again.status).toBe(503);
      // The rest of the service answers as usual.
      expect((await new Browser(t.url).get('/api/Authentication/Schemes')).status).toBe(200);
      expect(await logins(t, 'alice')).toEqual([]);
    } finally {
      KerberosServer.prototype.step = saved[0];
      KerberosClient.prototype.step = saved[1];
    }
  });
});
