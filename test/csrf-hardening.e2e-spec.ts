import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies } from './helpers/api-keys';
import { insertUser } from './helpers/users';

/**
 * Contract 13, CSRF: the origin rule applies whenever the session cookie is the credential that
 * authenticates. A cross-site page can make the browser send the cookie with any Authorization
 * header it likes only through CORS, but a header that is not `Bearer <token>` (or x-api-key) must
 * not switch the check off: the cookie still authenticates such a request. And a cross-site form can
 * post only form or text bodies: every sign-in and change-password route refuses them (415).
 */
const STRONG = 'Corr3ct-Horse-Battery';
const NEW_PASSWORD = 'N3w-Password-Strong';
const EVIL = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };
const VARIANTS: Array<[string, Record<string, string>]> = [
  ['Basic', { authorization: 'Basic eDp4' }],
  ['Negotiate', { authorization: 'Negotiate abc' }],
  ['an empty Bearer', { authorization: 'Bearer' }],
  ['a blank Bearer', { authorization: 'Bearer \t ' }],
  ['an unknown scheme', { authorization: 'Digest username="x"' }],
];

describe('CSRF with every Authorization variant (contract 13)', () => {
  let t: TestApp;
  let adminCookie: string;
  let victim: { id: number };

  const signIn = async (userName: string, password: string) => {
    const res = await requestWithoutCookies(`${t.url}/api/Authentication/ByUserNamePassword`, 'POST', {}, { userName, password });
    if (res.status !== 200) throw new Error(`sign-in of ${userName} failed: ${res.status}`);
    return { cookie: res.setCookies.map((line) => line.split(';')[0]).join('; '), token: res.json.token as string };
  };
  const logoutRows = async (userRegistryId: number) =>
    (await t.db.query(`SELECT 1 FROM "UserLogout" WHERE "UserRegistryId" = $1`, [userRegistryId])).length;

  beforeAll(async () => {
    t = await startTestApp();
    await insertUser(t, { name: 'landlord-admin', password: STRONG, landlord: true });
    victim = await insertUser(t, { name: 'victim', password: STRONG });
    adminCookie = (await signIn('landlord-admin', STRONG)).cookie;
  });
  afterAll(async () => t.close());

  it.each(VARIANTS)('ChangePassword with the cookie and %s from another site: 403, the password is unchanged', async (_, header) => {
    const { cookie } = await signIn('victim', STRONG);
    const res = await requestWithoutCookies(`${t.url}/api/Authentication/ChangePassword`, 'POST', { cookie, ...EVIL, ...header }, {
      password: STRONG,
      newPassword: NEW_PASSWORD,
      repeatNewPassword: NEW_PASSWORD,
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.setCookies).toEqual([]);
    // The old password still signs in, and the victim's session was not ended.
    await signIn('victim', STRONG);
    expect((await requestWithoutCookies(`${t.url}/api/Authentication/Session`, 'GET', { cookie })).status).toBe(200);
  });

  it.each(VARIANTS)('RevokeTokens with the cookie and %s from another site: 403, nothing revoked', async (_, header) => {
    const victimSession = await signIn('victim', STRONG);
    const before = await logoutRows(victim.id);
    const res = await requestWithoutCookies(`${t.url}/api/UserRegistry/RevokeTokens/${victim.id}`, 'POST', { cookie: adminCookie, ...EVIL, ...header });
    expect(res.status).toBe(403);
    expect(await logoutRows(victim.id)).toBe(before);
    expect((await requestWithoutCookies(`${t.url}/api/Authentication/Session`, 'GET', { cookie: victimSession.cookie })).status).toBe(200);
  });

  it.each(VARIANTS)('Logout with the cookie and %s from another site: 403, the session survives', async (_, header) => {
    const { cookie } = await signIn('victim', STRONG);
    const before = await logoutRows(victim.id);
    const res = await requestWithoutCookies(`${t.url}/api/Authentication/Logout`, 'POST', { cookie, ...EVIL, ...header });
    expect(res.status).toBe(403);
    expect(res.setCookies).toEqual([]);
    expect(await logoutRows(victim.id)).toBe(before);
    expect((await requestWithoutCookies(`${t.url}/api/Authentication/Session`, 'GET', { cookie })).status).toBe(200);
  });

  it.each(VARIANTS)('a registry change (deactivate a user) with the cookie and %s from another site: 403, no change', async (_, header) => {
    const res = await requestWithoutCookies(`${t.url}/api/UserRegistry/${victim.id}`, 'PUT', { cookie: adminCookie, ...EVIL, ...header }, { active: false });
    expect(res.status).toBe(403);
    const [row] = await t.db.query<{ Active: boolean }>(`SELECT "Active" FROM "UserRegistry" WHERE "Id" = $1`, [victim.id]);
    expect(row.Active).toBe(true);
  });

  it('the same requests from our own origin go through (the variants change nothing for a same-origin page)', async () => {
    const own = { origin: t.url };
    for (const [, header] of VARIANTS) {
      const res = await requestWithoutCookies(`${t.url}/api/UserRegistry/${victim.id}`, 'PUT', { cookie: adminCookie, ...own, ...header }, { email: 'v@example.com' });
      expect(res.status).toBe(200);
    }
  });

  it('a non-empty Bearer is the credential (the cookie is not used): exempt, and only the token counts', async () => {
    const admin = await signIn('landlord-admin', STRONG);
    // A valid token authenticates without the origin rule.
    const ok = await requestWithoutCookies(`${t.url}/api/UserRegistry/${victim.id}`, 'PUT', { cookie: adminCookie, ...EVIL, authorization: `Bearer ${admin.token}` }, { email: 'w@example.com' });
    expect(ok.status).toBe(200);
    // A bad token is refused even though the cookie would have been good: the cookie never authenticates it.
    const bad = await requestWithoutCookies(`${t.url}/api/UserRegistry/${victim.id}`, 'PUT', { cookie: adminCookie, ...EVIL, authorization: 'Bearer not-a-token' }, { active: false });
    expect(bad.status).toBe(401);
    const [row] = await t.db.query<{ Active: boolean }>(`SELECT "Active" FROM "UserRegistry" WHERE "Id" = $1`, [victim.id]);
    expect(row.Active).toBe(true);
  });

  it('an x-api-key header is the credential: exempt, and a bad key is refused without the cookie being used', async () => {
    const res = await requestWithoutCookies(`${t.url}/api/UserRegistry/${victim.id}`, 'PUT', { cookie: adminCookie, ...EVIL, 'x-api-key': 'not-a-key' }, { active: false });
    expect(res.status).toBe(401);
    const [row] = await t.db.query<{ Active: boolean }>(`SELECT "Active" FROM "UserRegistry" WHERE "Id" = $1`, [victim.id]);
    expect(row.Active).toBe(true);
  });
});

describe('sign-in and change-password accept JSON bodies only (contract 13, login CSRF)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    await insertUser(t, { name: 'formuser', password: STRONG });
  });
  afterAll(async () => t.close());

  // fetch labels a string body text/plain; bytes go out with no content type at all.
  const raw = (path: string, body: string | undefined, headers: Record<string, string>) =>
    fetch(`${t.url}${path}`, {
      method: 'POST',
      headers,
      body: body === undefined ? undefined : headers['content-type'] ? body : new TextEncoder().encode(body),
    }).then(async (res) => ({
      status: res.status,
      type: res.headers.get('content-type'),
      cookies: res.headers.getSetCookie(),
      json: await res.json().catch(() => undefined),
    }));
  const form = `userName=formuser&password=${encodeURIComponent(STRONG)}`;
  const json = JSON.stringify({ userName: 'formuser', password: STRONG });

  it.each([
    ['a form (what a cross-site HTML form posts)', form, { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart', `--b\r\nContent-Disposition: form-data; name="userName"\r\n\r\nformuser\r\n--b--\r\n`, { 'content-type': 'multipart/form-data; boundary=b' }],
    ['JSON sent as text/plain (a form with enctype text/plain)', json, { 'content-type': 'text/plain' }],
    ['JSON without a content type', json, {}],
    ['no body at all', undefined, {}],
  ])('ByUserNamePassword refuses %s with 415 and signs nobody in', async (_, body, headers) => {
    const res = await raw('/api/Authentication/ByUserNamePassword', body, { ...headers, origin: 'https://evil.example' });
    expect(res.status).toBe(415);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.cookies).toEqual([]);
    expect(await t.db.query(`SELECT 1 FROM "UserLogin" WHERE "CreatedUser" = 'formuser'`)).toEqual([]);
  });

  it('ChangePassword, WirePasswordHash and ByNegotiateMfa refuse a form too (415)', async () => {
    const browserLike = { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' };
    const signIn = await raw('/api/Authentication/ByUserNamePassword', json, { 'content-type': 'application/json' });
    expect(signIn.status).toBe(200);
    const change = await raw('/api/Authentication/ChangePassword', `password=${STRONG}&newPassword=${NEW_PASSWORD}&repeatNewPassword=${NEW_PASSWORD}`, {
      ...browserLike,
      authorization: `Bearer ${signIn.json.token}`,
    });
    expect(change.status).toBe(415);
    expect((await raw('/api/Authentication/WirePasswordHash', 'userName=formuser', browserLike)).status).toBe(415);
    expect((await raw('/api/Authentication/ByNegotiateMfa', 'mfa=12345678', browserLike)).status).toBe(415);
    // The JSON sign-in with the old password still works: nothing was changed.
    expect((await raw('/api/Authentication/ByUserNamePassword', json, { 'content-type': 'application/json' })).status).toBe(200);
  });

  it('JSON with a charset parameter is still JSON', async () => {
    const res = await raw('/api/Authentication/ByUserNamePassword', json, { 'content-type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
  });

  it('no other route accepts a form body either (only the OpenID Connect callback does)', async () => {
    const signIn = await raw('/api/Authentication/ByUserNamePassword', json, { 'content-type': 'application/json' });
    const res = await raw('/api/UserRegistry', 'name=x&roleRegistryId=1&active=true&password=x', {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Bearer ${signIn.json.token}`,
    });
    expect(res.status).toBe(415);
    expect(res.type).toMatch(/^application\/problem\+json/);
  });
});
