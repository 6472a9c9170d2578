import { startTestApp, TestApp } from './helpers/app';
import { sendRaw as send } from './helpers/raw-http';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

/**
 * Contract 13, CSRF, attacked on every cookie-authenticated state-changing route (enumerated from the
 * controllers) with every Authorization variant and every way a request can fail to prove it comes
 * from this site. Written against the HTTP behaviour only (middleware or guard alike):
 * - when the cookie is what authenticates (no Authorization, Basic, Negotiate, an empty or blank
 *   Bearer, two Authorization headers of which the first is not a Bearer), every cross-site form
 *   (evil origin, `null`, same host on another port or scheme, another host name, a Referer only, no
 *   proof at all, Sec-Fetch-Site same-site or cross-site even beside our own Origin) is 403;
 * - when something else is the credential (a Bearer of another user, a lowercase `bearer`, an API key),
 *   the cookie is not used: the request acts as that credential or is refused, never as the cookie's
 *   owner.
 * The cookie belongs to the seeded Administrator (landlord, every permission), so a 403 can only be the
 * origin rule; at the end nothing the administrator could have done has been done.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const OTHER_PASSWORD = 'Oth3r-Password-Strong';
const NEW_PASSWORD = 'N3w-Password-Strong';

type Headers = Record<string, string | string[]>;

describe('CSRF on every cookie-authenticated state-changing route × Authorization × origin (contract 13)', () => {
  let t: TestApp;
  let port: number;
  let adminCookie: string;
  let otherToken: string;
  let victim: { id: number; roleRegistryId: number; tenantRegistryId: number };
  let victimKeyId: number;
  let victimSessionId: string;
  let adminSessionId: string;
  let snapshot: unknown;

  const signIn = async (userName: string, password: string) => {
    const res = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName, password }),
    });
    if (res.status !== 200) throw new Error(`sign-in of ${userName} failed: ${res.status}`);
    const json = (await res.json()) as { token: string };
    return { cookie: res.headers.getSetCookie().map((line) => line.split(';')[0]).join('; '), token: json.token };
  };

  /** Everything any of the routes below could change. */
  const state = () =>
    t.db.query(
      `SELECT (SELECT count(*) FROM "TenantRegistry") AS tenants,
              (SELECT string_agg("Name" || ':' || "Active", ',' ORDER BY "Id") FROM "TenantRegistry") AS tenant_rows,
              (SELECT string_agg("Name" || ':' || "Active", ',' ORDER BY "Id") FROM "RoleRegistry") AS role_rows,
              (SELECT string_agg("Name" || ':' || "Active" || ':' || coalesce("Email", '') || ':' || "Password" || ':' || "Deleted"
                                 || ':' || coalesce("TokensValidFrom"::text, ''), ',' ORDER BY "Id") FROM "UserRegistry") AS user_rows,
              (SELECT count(*) FROM "UserRegistryApiKey") AS keys,
              (SELECT string_agg(coalesce("EndedDate"::text, 'open'), ',' ORDER BY "Id") FROM "UserSession") AS sessions,
              (SELECT count(*) FROM "UserLogout") AS logouts`,
    );

  beforeAll(async () => {
    t = await startTestApp();
    port = Number(new URL(t.url).port);
    const { browser } = await signInAdministrator(t);
    victim = await insertUser(t, { name: 'victim', password: STRONG, tenantName: 'Tenant V' });
    await insertUser(t, { name: 'other', password: OTHER_PASSWORD, tenantName: 'Tenant O' });
    adminCookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    await signIn('victim', STRONG);
    otherToken = (await signIn('other', OTHER_PASSWORD)).token;
    const key = await fetch(`${t.url}/api/UserRegistry/${victim.id}/ApiKey`, {
      method: 'POST',
      headers: { cookie: adminCookie, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'kept' }),
    });
    expect(key.status).toBe(201);
    victimKeyId = ((await key.json()) as { id: number }).id;
    [{ Id: victimSessionId }] = await t.db.query<{ Id: string }>(`SELECT "Id" FROM "UserSession" WHERE "UserRegistryId" = $1`, [victim.id]);
    [{ Id: adminSessionId }] = await t.db.query<{ Id: string }>(
      `SELECT s."Id" FROM "UserSession" s JOIN "UserRegistry" u ON u."Id" = s."UserRegistryId" WHERE u."Name" = 'Administrator' ORDER BY s."CreatedDate" DESC LIMIT 1`,
    );
    snapshot = await state();
  });
  afterAll(async () => t.close());

  /** [method, path, body]: every POST, PUT and DELETE a signed-in browser can send (sign-in routes apart). */
  const routes = (): Array<[string, string, unknown]> => [
    ['POST', '/api/TenantRegistry', { name: 'csrf tenant', active: true }],
    ['PUT', `/api/TenantRegistry/${victim.tenantRegistryId}`, { active: false }],
    ['POST', '/api/RoleRegistry', { name: 'csrf role', tenantRegistryId: victim.tenantRegistryId, permissions: [Permission.ReadWriteSecurityUser], active: true }],
    ['PUT', `/api/RoleRegistry/${victim.roleRegistryId}`, { active: false }],
    ['POST', '/api/UserRegistry', { name: 'csrf-user', roleRegistryId: victim.roleRegistryId, active: true, password: NEW_PASSWORD }],
    ['PUT', `/api/UserRegistry/${victim.id}`, { email: 'csrf@evil.example', active: false }],
    ['DELETE', `/api/UserRegistry/${victim.id}`, undefined],
    ['POST', `/api/UserRegistry/${victim.id}/Password`, { password: NEW_PASSWORD }],
    ['POST', `/api/UserRegistry/RevokeTokens/${victim.id}`, undefined],
    ['POST', `/api/UserRegistry/${victim.id}/ApiKey`, { name: 'csrf key' }],
    ['DELETE', `/api/UserRegistry/${victim.id}/ApiKey/${victimKeyId}`, undefined],
    ['DELETE', `/api/UserRegistry/${victim.id}/Sessions/${victimSessionId}`, undefined],
    ['DELETE', `/api/Authentication/Sessions/${adminSessionId}`, undefined],
    ['POST', '/api/Authentication/ChangePassword', { password: STRONG, newPassword: NEW_PASSWORD, repeatNewPassword: NEW_PASSWORD }],
    ['POST', '/api/Authentication/Logout', undefined],
  ];

  /** Authorization variants under which the cookie is still the credential. */
  const cookieVariants = (): Array<[string, Headers]> => [
    ['no Authorization', {}],
    ['Basic', { authorization: 'Basic eDp4' }],
    ['Negotiate', { authorization: 'Negotiate YWJj' }],
    ['an empty Bearer', { authorization: 'Bearer' }],
    ['Bearer and spaces', { authorization: 'Bearer      ' }],
    ['Bearer and a tab', { authorization: 'Bearer\t' }],
    ['two Authorization headers, Basic first', { authorization: ['Basic eDp4', `Bearer ${otherToken}`] }],
    ['two Authorization headers, an empty Bearer first', { authorization: ['Bearer ', `Bearer ${otherToken}`] }],
  ];

  const crossSite = (): Array<[string, Headers]> => [
    ['an evil Origin', { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
    ['Origin null', { origin: 'null' }],
    ['our host on another port', { origin: `http://127.0.0.1:${port + 1}` }],
    ['our host and port over https', { origin: `https://127.0.0.1:${port}` }],
    ['another name for our host', { origin: `http://localhost:${port}` }],
    ['an Origin that only starts like ours', { origin: `http://127.0.0.1:${port}.evil.example` }],
    ['a cross-site Referer only', { referer: 'https://evil.example/page' }],
    ['a Referer on another port only', { referer: `http://127.0.0.1:${port + 1}/` }],
    ['no Origin, Referer or Sec-Fetch-Site', {}],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site', origin: `http://127.0.0.1:${port}` }],
    ['Sec-Fetch-Site cross-site beside our own Origin', { 'sec-fetch-site': 'cross-site', origin: `http://127.0.0.1:${port}` }],
  ];

  it('every route answers 403 to every cross-site form of a cookie-authenticated request, and nothing changes', async () => {
    const allowed: string[] = [];
    for (const [method, path, body] of routes()) {
      for (const [variant, authorization] of cookieVariants()) {
        for (const [origin, headers] of crossSite()) {
          const res = await send(t.url, method, path, { cookie: adminCookie, ...authorization, ...headers }, body);
          if (res.status !== 403) allowed.push(`${method} ${path} with ${variant} and ${origin}: ${res.status}`);
        }
      }
    }
    expect(allowed).toEqual([]);
    expect(await state()).toEqual(snapshot);
  });

  it('a credential other than the cookie is used instead of it: never acts as the cookie owner, never 5xx', async () => {
    const acted: string[] = [];
    const variants: Array<[string, Headers]> = [
      ['lowercase bearer with garbage', { authorization: 'bearer x' }],
      ['a Bearer of another user', { authorization: `Bearer ${otherToken}` }],
      ['two Authorization headers, that Bearer first', { authorization: [`Bearer ${otherToken}`, 'Basic eDp4'] }],
      ['an empty x-api-key', { 'x-api-key': '' }],
      ['a garbage x-api-key', { 'x-api-key': 'garbage' }],
    ];
    for (const [method, path, body] of routes()) {
      if (path === '/api/Authentication/Logout') continue; // ends the bearer's own session: checked below
      for (const [variant, authorization] of variants) {
        const res = await send(t.url, method, path, { cookie: adminCookie, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', ...authorization }, body);
        if (res.status < 400 || res.status >= 500) acted.push(`${method} ${path} with ${variant}: ${res.status}`);
      }
    }
    expect(acted).toEqual([]);
    expect(await state()).toEqual(snapshot);
  });

  it('Logout with another user\'s Bearer ends that user\'s session, not the cookie owner\'s', async () => {
    const res = await send(t.url, 'POST', '/api/Authentication/Logout', {
      cookie: adminCookie,
      origin: 'https://evil.example',
      'sec-fetch-site': 'cross-site',
      authorization: `Bearer ${otherToken}`,
    });
    expect(res.status).toBe(200);
    const session = await fetch(`${t.url}/api/Authentication/Session`, { headers: { cookie: adminCookie } });
    expect(session.status).toBe(200);
    const other = await fetch(`${t.url}/api/Authentication/Session`, { headers: { authorization: `Bearer ${otherToken}` } });
    expect(other.status).toBe(401);
  });

  it('the same requests from our own page still go through (the rule refuses only what it must)', async () => {
    const own = { cookie: adminCookie, origin: `http://127.0.0.1:${port}` };
    expect((await send(t.url, 'PUT', `/api/UserRegistry/${victim.id}`, { ...own, authorization: 'Basic eDp4' }, { email: 'ok@example.com' })).status).toBe(200);
    expect((await send(t.url, 'PUT', `/api/UserRegistry/${victim.id}`, { ...own, 'sec-fetch-site': 'same-origin' }, { email: 'ok2@example.com' })).status).toBe(200);
    expect((await send(t.url, 'PUT', `/api/UserRegistry/${victim.id}`, { cookie: adminCookie, referer: `http://127.0.0.1:${port}/pages/users` }, { email: 'ok3@example.com' })).status).toBe(200);
  });
});
