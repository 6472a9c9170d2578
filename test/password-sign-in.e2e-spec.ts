import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { insertUser } from './helpers/users';

const STRONG = 'Corr3ct-Horse-Battery';

describe('password sign-in (contract 3)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const logins = (name: string) =>
    t.db.query<{ Failed: boolean; FailureTypeId: number | null; AuthenticationTypeId: number; CreatedUser: string }>(
      `SELECT * FROM "UserLogin" WHERE "CreatedUser" = $1 ORDER BY "Id"`,
      [name],
    );

  it('signs in with the right password: 200, token, both cookies, a success row', async () => {
    await insertUser(t, { name: 'alice', password: STRONG });
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'alice', password: STRONG });
    expect(res.status).toBe(200);
    expect(typeof res.json.token).toBe('string');
    expect(new Date(res.json.expiration).getTime()).toBeGreaterThan(t.clock.nowMs());
    const cookies = res.setCookies.map(parseSetCookie);
    const jwtCookie = cookies.find((c) => c.name === 'authentication-jwt')!;
    expect(jwtCookie.attributes.httponly).toBe(true);
    expect(String(jwtCookie.attributes.samesite).toLowerCase()).toBe('lax');
    expect(jwtCookie.attributes.expires).toBeUndefined();
    expect(cookies.find((c) => c.name === 'authentication-expiry')!.attributes.httponly).toBeUndefined();
    expect(await logins('alice')).toEqual([expect.objectContaining({ Failed: false, FailureTypeId: null, AuthenticationTypeId: 1 })]);

    const session = await browser.get('/api/Authentication/Session');
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ userName: 'alice', authenticationType: 'Cookie', landlord: false });
  });

  it('answers the same 401 for an unknown user and a wrong password, with their failure types', async () => {
    await insertUser(t, { name: 'bob', password: STRONG });
    const browser = new Browser(t.url);
    const unknown = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'nobody', password: 'x' });
    const wrong = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'bob', password: 'wrong' });
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.text).toBe(wrong.text);
    expect(unknown.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(unknown.setCookies).toEqual([]);
    expect((await logins('nobody'))[0]).toMatchObject({ Failed: true, FailureTypeId: 1 });
    expect((await logins('bob'))[0]).toMatchObject({ Failed: true, FailureTypeId: 5 });
  });
});
