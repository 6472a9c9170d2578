import { ManualClock } from '../src/common/clock';
import { requestWithoutCookies } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { insertUser } from './helpers/users';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

/**
 * Contract 13, sign-in throttling per address across nodes: SignInThrottle failed sign-ins per client
 * address per window, counted in Redis when configured, else in the database. Past it every sign-in
 * route answers 429 with Retry-After for the rest of the window, verifies nothing and writes a
 * UserLogin row with FailureTypeId 12. The nodes sit behind one trusted proxy (TrustProxy=True), so
 * each test speaks from its own client address, the right-most X-Forwarded-For entry.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const SIGN_IN = '/api/Authentication/ByUserNamePassword';
const REDIS = 'redis://127.0.0.1:6379';
const WINDOW_S = 300;

type Row = { FailureTypeId: number | null; AuthenticationTypeId: number; CreatedUser: string | null; RemoteIp: string; Failed: boolean };

let sequence = 0;
/** A fresh client address per test, so the tests of a file do not share a window. */
const newAddress = () => `203.0.113.${++sequence}`;

function signIn(node: TestApp, address: string, userName: string, password: string, forgedLeft = '198.51.100.1') {
  return requestWithoutCookies(`${node.url}${SIGN_IN}`, 'POST', { 'x-forwarded-for': `${forgedLeft}, ${address}` }, { userName, password });
}
const rowsOf = (db: TestDatabase, address: string) =>
  db.query<Row>(`SELECT "FailureTypeId", "AuthenticationTypeId", "CreatedUser", "RemoteIp", "Failed" FROM "UserLogin" WHERE "RemoteIp" = $1 ORDER BY "Id"`, [address]);

describe.each([
  { store: 'Redis', env: { RedisConnectionString: REDIS } as Record<string, string> },
  { store: 'the database (no Redis)', env: {} as Record<string, string> },
])('SignInThrottle on two nodes sharing $store (contract 13)', ({ env }) => {
  let db: TestDatabase;
  let clock: ManualClock;
  let a: TestApp;
  let b: TestApp;
  let pooler: TcpProxy;
  beforeAll(async () => {
    db = await createTestDatabase();
    clock = new ManualClock(Date.now());
    const shared = { ...env, TrustProxy: 'True', SignInThrottle: '20/5n' };
    // B reaches the same database by another address (as through a pooler): the nodes still count together.
    pooler = await startTcpProxy(Number(new URL(db.url).port || 5432));
    a = await startTestApp({ db, clock, env: shared });
    b = await startTestApp({ db, clock, env: { ...shared, ConnectionString: pooler.url(db.url) } });
    await insertUser(a, { name: 'alice', password: STRONG });
    await insertUser(a, { name: 'auditor', password: STRONG, landlord: true });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await pooler?.close();
    await db?.drop();
  });

  it('refuses the 21st failure of an address on either node: 429, Retry-After, a row 12, and the right password is not verified', async () => {
    const address = newAddress();
    for (let i = 0; i < 20; i++) {
      const res = await signIn(i % 2 ? b : a, address, `nobody-${i}`, 'wrong', `198.51.100.${i}`);
      expect(res.status).toBe(401);
    }
    const refused = await signIn(b, address, 'nobody-x', 'wrong');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('retry-after')).toBe(String(WINDOW_S));
    expect(refused.json).toMatchObject({ type: 'about:blank', title: 'Too Many Requests', status: 429 });
    expect(refused.setCookies).toEqual([]);

    // The right password from the same address: refused the same way, never verified or counted.
    const right = await signIn(a, address, 'alice', STRONG);
    expect(right.status).toBe(429);
    const [alice] = await db.query<{ FailedPasswordCount: number; LastLoginDate: Date | null }>(
      `SELECT "FailedPasswordCount", "LastLoginDate" FROM "UserRegistry" WHERE "Name" = 'alice'`,
    );
    expect(alice).toEqual({ FailedPasswordCount: 0, LastLoginDate: null });

    const rows = await rowsOf(db, address);
    expect(rows).toHaveLength(22);
    expect(rows.slice(0, 20).every((r) => r.FailureTypeId === FailureTypeId.NoUser)).toBe(true);
    expect(rows.slice(20)).toEqual([
      { FailureTypeId: FailureTypeId.Throttled, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, CreatedUser: 'nobody-x', RemoteIp: address, Failed: true },
      { FailureTypeId: FailureTypeId.Throttled, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, CreatedUser: 'alice', RemoteIp: address, Failed: true },
    ]);
    // The reads name it.
    const { json } = await requestWithoutCookies(`${a.url}/api/UserLogin?search=${address}&take=100`, 'GET', {
      authorization: `Bearer ${(await signIn(a, newAddress(), 'auditor', STRONG)).json.token}`,
    });
    expect(json.rows.filter((r: { failureTypeId: number }) => r.failureTypeId === FailureTypeId.Throttled).map((r: { failureReason: string }) => r.failureReason)).toEqual([
      'Throttled',
      'Throttled',
    ]);
  });

  it('keeps refusing for the rest of the window only, with a shrinking Retry-After', async () => {
    const address = newAddress();
    for (let i = 0; i < 20; i++) await signIn(a, address, 'nobody', 'wrong');
    clock.advance(100_000);
    const later = await signIn(b, address, 'alice', STRONG);
    expect(later.status).toBe(429);
    expect(later.headers.get('retry-after')).toBe(String(WINDOW_S - 100));
    clock.advance((WINDOW_S - 100) * 1000);
    expect((await signIn(b, address, 'alice', STRONG)).status).toBe(200);
  });

  it('cuts a concurrent burst at exactly the limit, whichever node each attempt reaches', async () => {
    const address = newAddress();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signIn(i % 2 ? b : a, address, `burst-${i}`, 'wrong', `198.51.100.${i}`)),
    );
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
    const rows = await rowsOf(db, address);
    expect(rows.filter((r) => r.FailureTypeId === FailureTypeId.NoUser)).toHaveLength(20);
    expect(rows.filter((r) => r.FailureTypeId === FailureTypeId.Throttled)).toHaveLength(30);
  });

  it('counts failures only: successful sign-ins never bring an address closer to the limit', async () => {
    const address = newAddress();
    for (let i = 0; i < 19; i++) await signIn(a, address, 'nobody', 'wrong');
    for (let i = 0; i < 5; i++) expect((await signIn(i % 2 ? a : b, address, 'alice', STRONG)).status).toBe(200);
    expect((await signIn(a, address, 'nobody', 'wrong')).status).toBe(401);
    expect((await signIn(a, address, 'nobody', 'wrong')).status).toBe(429);
  });

  it('throttles per address: forged left parts do not spread the count, and another client is unaffected', async () => {
    const address = newAddress();
    for (let i = 0; i < 20; i++) await signIn(a, address, 'nobody', 'wrong', `10.0.${i}.1`);
    expect((await signIn(b, address, 'nobody', 'wrong', '192.0.2.200')).status).toBe(429);
    expect((await signIn(b, newAddress(), 'alice', STRONG)).status).toBe(200);
  });
});

describe('SignInThrottle=0 turns it off (contract 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { SignInThrottle: '0' } });
  });
  afterAll(async () => t.close());

  it('never answers 429', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => requestWithoutCookies(`${t.url}${SIGN_IN}`, 'POST', {}, { userName: `n${i}`, password: 'x' })));
    expect(answers.every((r) => r.status === 401)).toBe(true);
  });
});

describe('SignInThrottle while Redis cannot be reached: the database counts (contract 13)', () => {
  let db: TestDatabase;
  let clock: ManualClock;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    db = await createTestDatabase();
    clock = new ManualClock(Date.now());
    // A Redis address nothing listens on, for both nodes: sign-in goes on, counted in the shared database.
    const shared = { RedisConnectionString: 'redis://127.0.0.1:1', TrustProxy: 'True', SignInThrottle: '20/5n' };
    a = await startTestApp({ db, clock, env: shared });
    b = await startTestApp({ db, clock, env: shared });
    await insertUser(a, { name: 'bob', password: STRONG });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('signs in with the right password and refuses a wrong one as usual, writing their rows', async () => {
    const address = newAddress();
    const right = await signIn(a, address, 'bob', STRONG);
    expect(right.status).toBe(200);
    expect(right.json).toMatchObject({ token: expect.any(String) });
    expect((await signIn(b, address, 'bob', 'wrong')).status).toBe(401);
    const rows = await rowsOf(db, address);
    expect(rows.map((r) => [r.Failed, r.FailureTypeId])).toEqual([
      [false, null],
      [true, 5],
    ]);
  });

  it('still throttles across both nodes: the 21st failure of an address is refused with 429 and a row 12', async () => {
    const address = newAddress();
    for (let i = 0; i < 20; i++) expect((await signIn(i % 2 ? b : a, address, `nobody-${i}`, 'wrong')).status).toBe(401);
    const refused = await signIn(b, address, 'bob', STRONG);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(WINDOW_S));
    const [count] = await db.query<{ FailureCount: number }>(`SELECT "FailureCount" FROM "SignInThrottle" WHERE "Address" = $1`, [address]);
    expect(count).toEqual({ FailureCount: 21 });
    const rows = await rowsOf(db, address);
    expect(rows).toHaveLength(21);
    expect(rows[20]).toMatchObject({ Failed: true, FailureTypeId: FailureTypeId.Throttled, CreatedUser: 'bob' });
    expect(await db.query(`SELECT 1 FROM "UserLogin" WHERE "RemoteIp" = $1 AND NOT "Failed"`, [address])).toEqual([]);
  });
});

describe('SignInThrottle on the OpenID Connect routes (contract 13)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: { SignInThrottle: '3/5n', OAuthAuthentication: 'True', OAuthAuthority: 'http://127.0.0.1:9/', OAuthClientId: 'client' },
    });
  });
  afterAll(async () => t.close());

  it('counts failed callbacks; past the limit the callback and the login start answer 429 and write rows 12', async () => {
    const callback = () =>
      fetch(`${t.url}/api/Authentication/OAuth/Callback`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'state=forged&code=x',
        redirect: 'manual',
      });
    for (let i = 0; i < 3; i++) {
      const res = await callback();
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/Account/Login?error=validation_failed');
    }
    const refused = await callback();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe(String(WINDOW_S));
    const login = await fetch(`${t.url}/api/Authentication/OAuth/Login?returnUrl=/`, { redirect: 'manual' });
    expect(login.status).toBe(429);
    const rows = await t.db.query<{ FailureTypeId: number; AuthenticationTypeId: number }>(
      `SELECT "FailureTypeId", "AuthenticationTypeId" FROM "UserLogin" ORDER BY "Id"`,
    );
    expect(rows.map((r) => r.FailureTypeId)).toEqual([9, 9, 9, 12, 12]);
    expect(rows.every((r) => r.AuthenticationTypeId === AuthenticationTypeId.OAuth)).toBe(true);
  });
});
