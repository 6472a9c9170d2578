import { constants, createHash, generateKeyPairSync, publicEncrypt } from 'node:crypto';
import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { insertUser } from './helpers/users';
import { AuthenticationTypeId, LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';
const SIGN_IN = '/api/Authentication/ByUserNamePassword';

type LoginRow = { Failed: boolean; FailureTypeId: number | null; AuthenticationTypeId: number; CreatedUser: string; FailureMessage: string | null };

describe('password sign-in (contract 3)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const logins = (name: string) =>
    t.db.query<LoginRow>(`SELECT * FROM "UserLogin" WHERE lower("CreatedUser") = lower($1) ORDER BY "Id"`, [name]);
  const user = (name: string) =>
    t.db.query<{ FailedPasswordCount: number; PasswordLocked: boolean; PasswordExpiryDate: Date; TokensValidFrom: Date | null; LastLoginDate: Date | null }>(
      `SELECT * FROM "UserRegistry" WHERE "Name" = $1`,
      [name],
    ).then((rows) => rows[0]);

  it('signs in with the right password: 200, token, both cookies, a success row', async () => {
    await insertUser(t, { name: 'alice', password: STRONG });
    const browser = new Browser(t.url);
    const res = await browser.post(SIGN_IN, { userName: 'alice', password: STRONG });
    expect(res.status).toBe(200);
    expect(typeof res.json.token).toBe('string');
    expect(new Date(res.json.expiration).getTime()).toBe(Math.floor((t.clock.nowMs() + 15 * 60_000) / 1000) * 1000);
    const cookies = res.setCookies.map(parseSetCookie);
    const jwtCookie = cookies.find((c) => c.name === 'authentication-jwt')!;
    expect(jwtCookie.value).toBe(res.json.token);
    expect(jwtCookie.attributes.httponly).toBe(true);
    expect(jwtCookie.attributes.path).toBe('/');
    expect(String(jwtCookie.attributes.samesite).toLowerCase()).toBe('lax');
    expect(jwtCookie.attributes.expires).toBeUndefined();
    expect(jwtCookie.attributes.secure).toBeUndefined();
    const expiryCookie = cookies.find((c) => c.name === 'authentication-expiry')!;
    expect(expiryCookie.attributes.httponly).toBeUndefined();
    expect(decodeURIComponent(expiryCookie.value)).toBe(res.json.expiration);
    expect(await logins('alice')).toEqual([expect.objectContaining({ Failed: false, FailureTypeId: null, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword })]);
    expect((await user('alice')).LastLoginDate).not.toBeNull();

    const session = await browser.get('/api/Authentication/Session');
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ userName: 'alice', authenticationType: 'Cookie', landlord: false, permissions: [] });
  });

  it('matches the user name case-insensitively', async () => {
    await insertUser(t, { name: 'Carol', password: STRONG });
    const res = await new Browser(t.url).post(SIGN_IN, { userName: 'cAROL', password: STRONG });
    expect(res.status).toBe(200);
  });

  it('answers one identical 401 for every cause, each with its failure type', async () => {
    await insertUser(t, { name: 'bob', password: STRONG });
    await insertUser(t, { name: 'inactive', password: STRONG, active: false });
    const browser = new Browser(t.url);
    const answers = [
      await browser.post(SIGN_IN, { userName: 'nobody', password: 'x' }),
      await browser.post(SIGN_IN, { userName: 'bob', password: 'wrong' }),
      await browser.post(SIGN_IN, { userName: 'bob', password: '' }),
      await browser.post(SIGN_IN, { userName: 'bob' }),
      await browser.post(SIGN_IN, { userName: 'inactive', password: STRONG }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.text).toBe(answers[0].text);
      expect(answer.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(answer.setCookies).toEqual([]);
    }
    expect(answers[0].json).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401 });
    expect((await logins('nobody')).map((r) => r.FailureTypeId)).toEqual([1]);
    expect((await logins('bob')).map((r) => r.FailureTypeId)).toEqual([5, 6, 6]);
    expect((await logins('inactive')).map((r) => r.FailureTypeId)).toEqual([2]);
    expect((await logins('bob')).every((r) => r.Failed && r.FailureMessage === null)).toBe(true);
  });

  it('locks on the fourth consecutive failure (PasswordAttempts 3), then refuses even the right password', async () => {
    await insertUser(t, { name: 'dave', password: STRONG });
    const browser = new Browser(t.url);
    for (let i = 0; i < 4; i++) expect((await browser.post(SIGN_IN, { userName: 'dave', password: `bad${i}` })).status).toBe(401);
    expect(await user('dave')).toMatchObject({ PasswordLocked: true });
    const right = await browser.post(SIGN_IN, { userName: 'dave', password: STRONG });
    expect(right.status).toBe(401);
    expect((await logins('dave')).map((r) => r.FailureTypeId)).toEqual([5, 5, 5, 5, 3]);
  });

  it('does not lock after three failures, and a success resets the count', async () => {
    await insertUser(t, { name: 'erin', password: STRONG });
    const browser = new Browser(t.url);
    for (let i = 0; i < 3; i++) await browser.post(SIGN_IN, { userName: 'erin', password: 'bad' });
    expect(await user('erin')).toMatchObject({ PasswordLocked: false, FailedPasswordCount: 3 });
    expect((await browser.post(SIGN_IN, { userName: 'erin', password: STRONG })).status).toBe(200);
    expect(await user('erin')).toMatchObject({ FailedPasswordCount: 0 });
  });

  it('counts concurrent wrong passwords atomically', async () => {
    await insertUser(t, { name: 'frank', password: STRONG });
    await Promise.all(
      Array.from({ length: 6 }, () => new Browser(t.url).post(SIGN_IN, { userName: 'frank', password: 'wrong' })),
    );
    const row = await user('frank');
    expect(row.PasswordLocked).toBe(true);
    // Contract 13: only PasswordAttempts + 1 of them were verified; the others gave their count back.
    expect(row.FailedPasswordCount).toBe(4);
  });

  it('requires a new password when expired: 403 PasswordChangeRequired, then rules, then success', async () => {
    await insertUser(t, { name: 'gina', password: STRONG, expired: true });
    const browser = new Browser(t.url);
    const expired = await browser.post(SIGN_IN, { userName: 'gina', password: STRONG });
    expect(expired.status).toBe(403);
    expect(expired.json).toMatchObject({ status: 403, code: 'PasswordChangeRequired' });
    expect(expired.setCookies).toEqual([]);

    const weak = await browser.post(SIGN_IN, { userName: 'gina', password: STRONG, newPassword: 'short', repeatNewPassword: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.json.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['newPassword']));
    expect(weak.json.errors.length).toBeGreaterThanOrEqual(3);
    const mismatch = await browser.post(SIGN_IN, {
      userName: 'gina',
      password: STRONG,
      newPassword: 'An0ther-Good-One',
      repeatNewPassword: 'An0ther-Good-Two',
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.errors).toEqual([{ field: 'repeatNewPassword', message: 'must equal newPassword' }]);
    const same = await browser.post(SIGN_IN, { userName: 'gina', password: STRONG, newPassword: STRONG, repeatNewPassword: STRONG });
    expect(same.status).toBe(400);
    expect((await user('gina')).FailedPasswordCount).toBe(0);

    const changed = await browser.post(SIGN_IN, {
      userName: 'gina',
      password: STRONG,
      newPassword: 'An0ther-Good-One',
      repeatNewPassword: 'An0ther-Good-One',
    });
    expect(changed.status).toBe(200);
    const row = await user('gina');
    expect(row.PasswordExpiryDate.getTime()).toBe(t.clock.nowMs() + 90 * 86_400_000);
    expect(row.TokensValidFrom!.getTime()).toBe(t.clock.nowMs());
    expect((await logins('gina')).map((r) => r.FailureTypeId)).toEqual([4, 4, 4, 4, null]);
    const logouts = await t.db.query<{ ReasonId: number; OutcomeId: number }>(
      `SELECT * FROM "UserLogout" WHERE "CreatedUser" = 'gina'`,
    );
    expect(logouts).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.PasswordChanged, OutcomeId: LogoutOutcomeId.Revoked })]);
    expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
    expect((await new Browser(t.url).post(SIGN_IN, { userName: 'gina', password: STRONG })).status).toBe(401);
  });

  it('changes the password of a signed-in user and ends the earlier sessions', async () => {
    await insertUser(t, { name: 'hank', password: STRONG });
    const first = new Browser(t.url);
    const second = new Browser(t.url);
    await first.post(SIGN_IN, { userName: 'hank', password: STRONG });
    await second.post(SIGN_IN, { userName: 'hank', password: STRONG });
    t.clock.advance(1000);
    const wrong = await first.post('/api/Authentication/ChangePassword', {
      password: 'not-it',
      newPassword: 'Brand-N3w-Password',
      repeatNewPassword: 'Brand-N3w-Password',
    });
    expect(wrong.status).toBe(400);
    const res = await first.post('/api/Authentication/ChangePassword', {
      password: STRONG,
      newPassword: 'Brand-N3w-Password',
      repeatNewPassword: 'Brand-N3w-Password',
    });
    expect(res.status).toBe(200);
    expect(typeof res.json.token).toBe('string');
    expect((await first.get('/api/Authentication/Session')).status).toBe(200);
    expect((await second.get('/api/Authentication/Session')).status).toBe(401);
    expect((await new Browser(t.url).post(SIGN_IN, { userName: 'hank', password: 'Brand-N3w-Password' })).status).toBe(200);
  });

  it('tells whether a user sends the wire hash, and signs such a user in with SHA-256(password + userName)', async () => {
    const wire = createHash('sha256').update(`${STRONG}wired`).digest('hex');
    const argon2 = await import('argon2');
    const created = await insertUser(t, { name: 'wired', password: wire, wirePasswordHash: true });
    expect(created.id).toBeGreaterThan(0);
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/WirePasswordHash', { userName: 'wired' })).json).toEqual({ wirePasswordHash: true });
    expect((await browser.post('/api/Authentication/WirePasswordHash', { userName: 'alice' })).json).toEqual({ wirePasswordHash: false });
    expect((await browser.post('/api/Authentication/WirePasswordHash', { userName: 'no-such-user' })).json).toEqual({ wirePasswordHash: false });
    expect((await browser.post(SIGN_IN, { userName: 'wired', password: wire })).status).toBe(200);
    expect((await browser.post(SIGN_IN, { userName: 'wired', password: STRONG })).status).toBe(401);
    expect(argon2).toBeDefined();
  });

  it('refuses hostile input with 4xx problems, never 5xx', async () => {
    const browser = new Browser(t.url);
    const cases = [
      await browser.request('POST', SIGN_IN, { body: '{"userName": ', headers: { 'content-type': 'application/json' } }),
      await browser.post(SIGN_IN, { userName: 5, password: [] }),
      await browser.post(SIGN_IN, { userName: 'x'.repeat(300), password: 'y' }),
      await browser.post(SIGN_IN, { userName: 'a', password: 'b'.repeat(40_000) }),
      await browser.post(`${SIGN_IN}?x=%00`, { userName: 'a', password: 'b' }),
      await browser.post(SIGN_IN, { userName: 'evil\u0000\u001b[31m', password: 'p' }),
      await browser.post(SIGN_IN, { userName: "' OR 1=1 --", password: 'p' }),
    ];
    expect(cases.map((c) => c.status)).toEqual([400, 400, 400, 413, 400, 401, 401]);
    for (const c of cases) expect(c.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const [stored] = await t.db.query<{ CreatedUser: string }>(`SELECT "CreatedUser" FROM "UserLogin" WHERE "CreatedUser" LIKE 'evil%'`);
    expect(stored.CreatedUser).toBe('evil[31m');
  });
});

describe('password transport with RSA-OAEP (contract 3)', () => {
  let t: TestApp;
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const encrypt = (value: string) =>
    publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(value)).toString('base64');

  beforeAll(async () => {
    t = await startTestApp({
      env: {
        PasswordAsymmetricEncryption: 'True',
        PasswordAsymmetricEncryptionPublicKey: publicPem.replace(/\n/g, '\\n'),
        PasswordAsymmetricEncryptionPrivateKey: privatePem,
      },
    });
    await insertUser(t, { name: 'ivy', password: STRONG });
  });
  afterAll(async () => t.close());

  it('publishes the public key and accepts only encrypted passwords', async () => {
    const browser = new Browser(t.url);
    const key = await browser.get('/api/Authentication/PasswordPublicKey');
    expect(key.json).toEqual({ enabled: true, algorithm: 'RSA-OAEP-256', publicKey: publicPem });
    expect((await browser.post(SIGN_IN, { userName: 'ivy', password: encrypt(STRONG) })).status).toBe(200);
    const plain = await browser.post(SIGN_IN, { userName: 'ivy', password: STRONG });
    const garbage = await browser.post(SIGN_IN, { userName: 'ivy', password: 'bm90IGNpcGhlcnRleHQ=' });
    expect([plain.status, garbage.status]).toEqual([401, 401]);
    const rows = await t.db.query<{ FailureTypeId: number | null }>(
      `SELECT "FailureTypeId" FROM "UserLogin" WHERE "CreatedUser" = 'ivy' ORDER BY "Id"`,
    );
    expect(rows.map((r) => r.FailureTypeId)).toEqual([null, 5, 5]);
  });
});

describe('unreadable request bodies', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers fixed problems, never the parser\'s message', async () => {
    const browser = new Browser(t.url);
    const json = { 'content-type': 'application/json' };
    const cases = [
      await browser.request('POST', SIGN_IN, { body: 'null', headers: json }),
      await browser.request('POST', SIGN_IN, { body: '{"userName":', headers: json }),
      await browser.request('POST', SIGN_IN, { body: JSON.stringify({ userName: 'x'.repeat(40_000) }), headers: json }),
      await browser.request('POST', SIGN_IN, { body: '{}', headers: { 'content-type': 'application/json; charset=klingon' } }),
    ];
    expect(cases.map((c) => [c.status, c.json.detail])).toEqual([
      [400, 'The request body is not valid JSON.'],
      [400, 'The request body is not valid JSON.'],
      [413, 'The request body is larger than 32 KiB.'],
      [415, 'The request body charset is not supported.'],
    ]);
    for (const c of cases) expect(c.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
