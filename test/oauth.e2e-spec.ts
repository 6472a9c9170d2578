import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { OidcProvider, startOidcProvider } from './helpers/oidc-provider';
import { requestWithoutCookies } from './helpers/api-keys';
import { insertUser } from './helpers/users';
import { openSessionOf, sessionRowOf, sessionRowsOf } from './helpers/user-sessions';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

/**
 * OpenID Connect sign-in (contract 8 and 12) against a real OpenID provider (oidc-provider) on
 * loopback, driving the browser's whole flow with HTTP requests: the service's redirect, the
 * provider's login, the form_post (or query) authorization response, the callback.
 */
const CALLBACK = '/api/Authentication/OAuth/Callback';
const SECRET = 'tm-client-secret-0123456789';

let idp: OidcProvider;
let formPost: TestApp;
let secondNode: TestApp;
let forceGet: TestApp;
let forceRedirect: TestApp;
let withMfa: TestApp;
let unreachable: TestApp;
let passwordOnly: TestApp;

const oauthEnv = (extra: Record<string, string> = {}) => ({
  OAuthAuthentication: 'True',
  OAuthAuthority: idp.issuer,
  OAuthClientId: 'tm-client',
  OAuthClientSecret: SECRET,
  ...extra,
});

/**
 * Every node shares one database and stays up for the whole file: the nodes of one process share
 * passport's strategy registry, so a node's session check may run through another node's strategy.
 */
beforeAll(async () => {
  idp = await startOidcProvider();
  formPost = await startTestApp({ env: oauthEnv() });
  const db = formPost.db;
  secondNode = await startTestApp({ env: oauthEnv(), db });
  forceGet = await startTestApp({ env: oauthEnv({ OAuthForceGet: 'True' }), db });
  forceRedirect = await startTestApp({ env: oauthEnv({ OAuthForceRedirect: 'https://portal.example/home' }), db });
  withMfa = await startTestApp({ env: oauthEnv({ EnableMultifactorAuthentication: 'True' }), db });
  unreachable = await startTestApp({ env: oauthEnv({ OAuthAuthority: 'http://127.0.0.1:1' }), db });
  passwordOnly = await startTestApp({ db });
  await idp.configure({ redirectUris: [formPost, secondNode, forceGet, forceRedirect, withMfa].map((t) => t.url + CALLBACK) });
});
afterAll(async () => {
  for (const t of [passwordOnly, unreachable, withMfa, forceRedirect, forceGet, secondNode]) await t?.close();
  await formPost?.close();
  await idp?.stop();
});

interface Flow {
  browser: Browser;
  start: Awaited<ReturnType<Browser['get']>>;
  callback: Awaited<ReturnType<Browser['get']>>;
}

/**
 * One browser sign-in. The form_post callback is a cross-site POST from the provider's page: like a
 * real browser on http, it carries no SameSite=Lax cookie of the service. The query callback is a
 * top-level GET navigation, which does carry them.
 */
async function flow(
  t: TestApp,
  account: string | null,
  options: {
    returnUrl?: string;
    deny?: string;
    mutate?: (params: Record<string, string>) => void;
    callbackNode?: TestApp;
    /** Cookies the browser holds already (a session cookie of this service). */
    cookies?: Record<string, string>;
    /** The provider is on a sibling host of the same site: the form_post carries the service's Lax cookies. */
    sameSiteProvider?: boolean;
  } = {},
): Promise<Flow> {
  const browser = new Browser(t.url);
  for (const [name, value] of Object.entries(options.cookies ?? {})) browser.cookies.set(name, value);
  const query = options.returnUrl === undefined ? '' : `?returnUrl=${encodeURIComponent(options.returnUrl)}`;
  const start = await browser.get(`/api/Authentication/OAuth/Login${query}`);
  expect(start.status).toBe(302);
  const answer = await idp.authorize(start.headers.get('location')!, account, options.deny);
  options.mutate?.(answer.params);
  const node = options.callbackNode ?? t;
  const target = new Browser(node.url);
  for (const [name, value] of browser.cookies) target.cookies.set(name, value);
  const callback =
    answer.method === 'POST'
      ? await target.request('POST', CALLBACK, {
          body: new URLSearchParams(answer.params).toString(),
          headers: options.sameSiteProvider
            ? { 'content-type': 'application/x-www-form-urlencoded', origin: idp.issuer, 'sec-fetch-site': 'same-site' }
            : { 'content-type': 'application/x-www-form-urlencoded', origin: idp.issuer, 'sec-fetch-site': 'cross-site', cookie: '' },
        })
      : await target.get(`${CALLBACK}?${new URLSearchParams(answer.params)}`, { 'sec-fetch-site': 'cross-site' });
  return { browser: target, start, callback };
}

const rows = (t: TestApp, where = 'TRUE', params: unknown[] = []) =>
  t.db.query<{ CreatedUser: string | null; Failed: boolean; FailureTypeId: number | null; FailureMessage: string | null; AuthenticationTypeId: number; UserRegistryId: number | null }>(
    `SELECT "CreatedUser", "Failed", "FailureTypeId", "FailureMessage", "AuthenticationTypeId", "UserRegistryId" FROM "UserLogin" WHERE ${where} ORDER BY "Id"`,
    params,
  );
const lastRow = async (t: TestApp) => (await rows(t)).at(-1)!;

function expectFailure(f: Flow) {
  expect(f.callback.status).toBe(302);
  expect(f.callback.headers.get('location')).toMatch(/^\/Account\/Login\?error=[a-z_]+$/);
  expect(f.callback.setCookies.map((line) => parseSetCookie(line).name)).not.toContain('authentication-jwt');
}

describe('the start of a flow', () => {
  it('redirects to the provider with code + S256 PKCE, state, nonce, form_post and its own callback as redirect URI', async () => {
    const browser = new Browser(formPost.url);
    const res = await browser.get('/api/Authentication/OAuth/Login?returnUrl=%2FAdministration');
    expect(res.status).toBe(302);
    const url = new URL(res.headers.get('location')!);
    expect(url.origin).toBe(idp.issuer);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('response_mode')).toBe('form_post');
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('nonce')).toBeTruthy();
    expect(url.searchParams.get('client_id')).toBe('tm-client');
    expect(url.searchParams.get('redirect_uri')).toBe(formPost.url + CALLBACK);
    const state = url.searchParams.get('state')!;
    // The state is sealed: neither the return URL nor the verifier is readable in it.
    expect(Buffer.from(state, 'base64url').toString('latin1')).not.toContain('Administration');
    const binding = res.setCookies.map(parseSetCookie).find((c) => c.name === 'oauth-binding')!;
    expect(binding.attributes.httponly).toBe(true);
    // No session yet, and nothing recorded.
    expect(res.setCookies.map((line) => parseSetCookie(line).name)).not.toContain('authentication-jwt');
  });

  it('asks for query mode with OAuthForceGet', async () => {
    const res = await new Browser(forceGet.url).get('/api/Authentication/OAuth/Login');
    expect(new URL(res.headers.get('location')!).searchParams.get('response_mode')).toBe('query');
  });
});

describe('the form_post callback and the CSRF rule', () => {
  it('signs in a browser that already holds a session cookie, from a provider on a sibling host of the same site (@CsrfExempt)', async () => {
    const password = 'Corr3ct-Horse-Battery';
    await insertUser(formPost, { name: 'sameSiteUser', password });
    // Password sign-in is off on the OpenID Connect nodes: the cookie comes from a node of the same
    // deployment that has it (one database, one JwtKey).
    const signedIn = await requestWithoutCookies(`${passwordOnly.url}/api/Authentication/ByUserNamePassword`, 'POST', {}, { userName: 'sameSiteUser', password });
    expect(signedIn.status).toBe(200);
    const cookies = Object.fromEntries(signedIn.setCookies.map(parseSetCookie).map((c) => [c.name, c.value]));
    expect(cookies['authentication-jwt']).toBeTruthy();
    idp.accounts.set('sub-same-site', { preferred_username: 'sameSiteUser' });
    // Same-site, not same-origin, and the session cookie is sent: the origin rule alone would answer 403.
    const f = await flow(formPost, 'sub-same-site', { cookies, sameSiteProvider: true, returnUrl: '/Administration' });
    expect(f.callback.status).toBe(302);
    expect(f.callback.headers.get('location')).toBe('/Administration');
    expect(await lastRow(formPost)).toMatchObject({ CreatedUser: 'sameSiteUser', Failed: false, AuthenticationTypeId: AuthenticationTypeId.OAuth });
    // Every other state-changing route still refuses the same request.
    const other = await requestWithoutCookies(`${formPost.url}/api/Authentication/Logout`, 'POST', {
      cookie: `authentication-jwt=${cookies['authentication-jwt']}`,
      origin: idp.issuer,
      'sec-fetch-site': 'same-site',
    });
    expect(other.status).toBe(403);
  });
});

describe('successful sign-in by form_post', () => {
  it('signs the matched user in: cookies, a type 3 row, then 302 to the local return URL', async () => {
    const user = await insertUser(formPost, { name: 'Alice' });
    idp.accounts.set('sub-alice', { preferred_username: 'alice', email: 'someone-else@example.com' });
    const f = await flow(formPost, 'sub-alice', { returnUrl: '/Administration/Security/UserLogin?take=5' });
    expect(f.callback.status).toBe(302);
    expect(f.callback.headers.get('location')).toBe('/Administration/Security/UserLogin?take=5');
    const names = f.callback.setCookies.map((line) => parseSetCookie(line).name);
    expect(names).toEqual(expect.arrayContaining(['authentication-jwt', 'authentication-expiry']));
    expect(await lastRow(formPost)).toMatchObject({ CreatedUser: 'Alice', Failed: false, FailureTypeId: null, AuthenticationTypeId: AuthenticationTypeId.OAuth });
    // The session row of contract 14, named by the cookie token's sid.
    const token = f.callback.setCookies.map(parseSetCookie).find((c) => c.name === 'authentication-jwt')!.value;
    expect(await sessionRowOf(formPost, token)).toMatchObject(openSessionOf(user, AuthenticationTypeId.OAuth, formPost.clock.nowMs()));
    expect(await sessionRowsOf(formPost, user.id)).toHaveLength(1);
    const session = await f.browser.get('/api/Authentication/Session');
    expect(session.json).toMatchObject({ userName: 'Alice', authenticationType: 'Cookie' });
  });

  it('tries preferred_username, email, upn, unique_name, name, sub in that order', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['sub-email', { email: 'Carol@Example.com', name: 'not-carol' }, 'carol@example.com'],
      ['sub-upn', { upn: 'dave@corp.example', name: 'not-dave' }, 'dave@corp.example'],
      ['sub-unique', { unique_name: 'CORP\\erin', name: 'not-erin' }, 'corp\\erin'],
      ['sub-name', { name: 'Frank Smith' }, 'frank smith'],
      ['grace', {}, 'Grace'],
      ['sub-blank', { preferred_username: '   ', email: 'heidi' }, 'heidi'],
    ];
    for (const [sub, claims, userName] of cases) {
      await insertUser(formPost, { name: userName });
      idp.accounts.set(sub, claims);
      const f = await flow(formPost, sub);
      expect({ sub, status: f.callback.status, location: f.callback.headers.get('location') }).toEqual({ sub, status: 302, location: '/' });
      expect(await lastRow(formPost)).toMatchObject({ CreatedUser: userName, Failed: false, AuthenticationTypeId: AuthenticationTypeId.OAuth });
    }
  });

  it('works across nodes without sticky sessions: started on one node, finished on the other', async () => {
    await insertUser(formPost, { name: 'ivan' });
    idp.accounts.set('sub-ivan', { preferred_username: 'ivan' });
    const f = await flow(formPost, 'sub-ivan', { returnUrl: '/x', callbackNode: secondNode });
    expect(f.callback.status).toBe(302);
    expect(f.callback.headers.get('location')).toBe('/x');
    expect((await f.browser.get('/api/Authentication/Session')).status).toBe(200);
  });

  it('never adds a second factor, even with EnableMultifactorAuthentication', async () => {
    await insertUser(withMfa, { name: 'judy' });
    idp.accounts.set('sub-judy', { preferred_username: 'judy' });
    const f = await flow(withMfa, 'sub-judy');
    expect(f.callback.headers.get('location')).toBe('/');
    expect((await f.browser.get('/api/Authentication/Session')).status).toBe(200);
  });
});

describe('the open-redirect guard', () => {
  it('sends every non-local return URL to /', async () => {
    await insertUser(formPost, { name: 'mallory-target' });
    idp.accounts.set('sub-target', { preferred_username: 'mallory-target' });
    const hostile = [
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      '/%2F%2Fevil.example',
      '/%2f/evil.example',
      '/%5Cevil.example',
      '/%255C%255Cevil.example',
      '/ok%0D%0ASet-Cookie:%20x=1',
      '/ok\tx',
      ' /evil',
      'evil',
    ];
    for (const returnUrl of hostile) {
      const f = await flow(formPost, 'sub-target', { returnUrl });
      expect({ returnUrl, location: f.callback.headers.get('location') }).toEqual({ returnUrl, location: '/' });
    }
  });

  it('OAuthForceRedirect overrides the return URL', async () => {
    await insertUser(forceRedirect, { name: 'kate' });
    idp.accounts.set('sub-kate', { preferred_username: 'kate' });
    const f = await flow(forceRedirect, 'sub-kate', { returnUrl: '/somewhere' });
    expect(f.callback.status).toBe(302);
    expect(f.callback.headers.get('location')).toBe('https://portal.example/home');
  });
});

describe('failures: 302 to /Account/Login?error=… and a UserLogin row of type 3', () => {
  it('no matching user: FailureTypeId 1, CreatedUser the claim, FailureMessage null; no account is created', async () => {
    idp.accounts.set('sub-ghost', { preferred_username: 'ghost' });
    const f = await flow(formPost, 'sub-ghost');
    expectFailure(f);
    expect(await lastRow(formPost)).toEqual({
      CreatedUser: 'ghost', Failed: true, FailureTypeId: FailureTypeId.NoUser, FailureMessage: null, AuthenticationTypeId: AuthenticationTypeId.OAuth, UserRegistryId: null,
    });
    expect(await formPost.db.query(`SELECT 1 FROM "UserRegistry" WHERE lower("Name") = 'ghost'`)).toEqual([]);
  });

  it('an inactive user: 2; a locked user: 3', async () => {
    await insertUser(formPost, { name: 'larry', active: false });
    const { id } = await insertUser(formPost, { name: 'mia' });
    await formPost.db.query(`UPDATE "UserRegistry" SET "PasswordLocked" = true WHERE "Id" = $1`, [id]);
    idp.accounts.set('sub-larry', { preferred_username: 'larry' });
    idp.accounts.set('sub-mia', { preferred_username: 'mia' });
    expectFailure(await flow(formPost, 'sub-larry'));
    expect(await lastRow(formPost)).toMatchObject({ CreatedUser: 'larry', FailureTypeId: FailureTypeId.NotActive, FailureMessage: null });
    expectFailure(await flow(formPost, 'sub-mia'));
    expect(await lastRow(formPost)).toMatchObject({ CreatedUser: 'mia', FailureTypeId: FailureTypeId.PasswordLocked, FailureMessage: null, UserRegistryId: id });
  });

  it('a ticket without a usable identity claim: 7', async () => {
    const unusable = 'x'.repeat(300);
    idp.accounts.set(unusable, { preferred_username: '', email: 42 });
    expectFailure(await flow(formPost, unusable));
    const row = await lastRow(formPost);
    expect(row).toMatchObject({ Failed: true, FailureTypeId: FailureTypeId.NoIdentityClaim, AuthenticationTypeId: AuthenticationTypeId.OAuth });
    expect(row.FailureMessage).toMatch(/identity claim/);
  });

  it('the provider denies (access_denied): 8 with its message, bounded to 2048 characters', async () => {
    idp.accounts.set('sub-nina', { preferred_username: 'nina' });
    expectFailure(await flow(formPost, null));
    const row = await lastRow(formPost);
    expect(row).toMatchObject({ Failed: true, FailureTypeId: FailureTypeId.RemoteFailure });
    expect(row.FailureMessage).toMatch(/access_denied/);

    expectFailure(await flow(formPost, null, { deny: 'd'.repeat(3000) }));
    const long = await lastRow(formPost);
    expect(long.FailureTypeId).toBe(FailureTypeId.RemoteFailure);
    expect(long.FailureMessage!.length).toBe(2048);
  });

  it('a tampered, missing or expired state, a replayed code, or the wrong response mode: 9', async () => {
    idp.accounts.set('sub-oscar', { preferred_username: 'oscar' });
    await insertUser(formPost, { name: 'oscar' });
    const tamper = (params: Record<string, string>) => {
      const s = params.state;
      params.state = s.slice(0, 20) + (s[20] === 'A' ? 'B' : 'A') + s.slice(21);
    };
    expectFailure(await flow(formPost, 'sub-oscar', { mutate: tamper }));
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure, FailureMessage: expect.stringMatching(/state/) });

    expectFailure(await flow(formPost, 'sub-oscar', { mutate: (params) => delete params.state }));
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure });

    // Another flow's code with this flow's state: the PKCE verifier does not fit the code.
    const browser = new Browser(formPost.url);
    const other = await idp.authorize((await browser.get('/api/Authentication/OAuth/Login')).headers.get('location')!, 'sub-oscar');
    expectFailure(await flow(formPost, 'sub-oscar', { mutate: (params) => (params.code = other.params.code) }));
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure });

    // A replayed authorization response: the code is single-use.
    let captured: Record<string, string> = {};
    const first = await flow(formPost, 'sub-oscar', { mutate: (params) => (captured = { ...params }) });
    expect(first.callback.headers.get('location')).toBe('/');
    const replay = await new Browser(formPost.url).request('POST', CALLBACK, {
      body: new URLSearchParams(captured).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site' },
    });
    expectFailure({ browser, start: replay, callback: replay });
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure });

    // Expired: the sign-in took more than ten minutes at the provider.
    const slow = await flow(formPost, 'sub-oscar', { mutate: () => formPost.clock.advance(11 * 60_000) });
    formPost.clock.advance(-11 * 60_000);
    expectFailure(slow);
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure, FailureMessage: expect.stringMatching(/expired/) });

    // form_post expected; a GET with a valid response is refused.
    const start = await new Browser(formPost.url).get('/api/Authentication/OAuth/Login');
    const answer = await idp.authorize(start.headers.get('location')!, 'sub-oscar');
    const wrongMode = await new Browser(formPost.url).get(`${CALLBACK}?${new URLSearchParams(answer.params)}`);
    expectFailure({ browser, start: wrongMode, callback: wrongMode });
    expect(await lastRow(formPost)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure });
  });

  it('a database error while matching the user: 10', async () => {
    idp.accounts.set('sub-peggy', { preferred_username: 'peggy' });
    await formPost.db.query(`ALTER TABLE "TenantRegistry" RENAME TO "TenantRegistryAway"`);
    let f: Flow;
    try {
      f = await flow(formPost, 'sub-peggy');
    } finally {
      await formPost.db.query(`ALTER TABLE "TenantRegistryAway" RENAME TO "TenantRegistry"`);
    }
    expectFailure(f);
    expect(await lastRow(formPost)).toMatchObject({ CreatedUser: 'peggy', Failed: true, FailureTypeId: FailureTypeId.InternalError, FailureMessage: expect.any(String) });
  });

  it('a provider that cannot be reached: 302 to the login page with an error and a row 8, never a 500', async () => {
    const res = await new Browser(unreachable.url).get('/api/Authentication/OAuth/Login?returnUrl=/x');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/Account/Login?error=provider_error');
    expect(await lastRow(unreachable)).toMatchObject({ Failed: true, FailureTypeId: FailureTypeId.RemoteFailure, AuthenticationTypeId: AuthenticationTypeId.OAuth });
  });
});

describe('OAuthForceGet: the response in the query string', () => {
  it('signs in by GET, with the binding cookie the browser sends on the top-level navigation', async () => {
    await insertUser(forceGet, { name: 'quinn' });
    idp.accounts.set('sub-quinn', { preferred_username: 'quinn' });
    const f = await flow(forceGet, 'sub-quinn', { returnUrl: '/home' });
    expect(f.callback.status).toBe(302);
    expect(f.callback.headers.get('location')).toBe('/home');
    expect(await lastRow(forceGet)).toMatchObject({ CreatedUser: 'quinn', Failed: false, AuthenticationTypeId: AuthenticationTypeId.OAuth });
  });

  it('refuses a response carried into another browser (login CSRF), a POST, and an open redirect', async () => {
    idp.accounts.set('sub-quinn', { preferred_username: 'quinn' });
    const start = await new Browser(forceGet.url).get('/api/Authentication/OAuth/Login');
    const answer = await idp.authorize(start.headers.get('location')!, 'sub-quinn');
    expect(answer.method).toBe('GET');
    const victim = new Browser(forceGet.url);
    const planted = await victim.get(`${CALLBACK}?${new URLSearchParams(answer.params)}`);
    expectFailure({ browser: victim, start: planted, callback: planted });
    expect(await lastRow(forceGet)).toMatchObject({ FailureTypeId: FailureTypeId.LocalValidationFailure });

    const posted = await victim.request('POST', CALLBACK, {
      body: new URLSearchParams(answer.params).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectFailure({ browser: victim, start: posted, callback: posted });

    const f = await flow(forceGet, 'sub-quinn', { returnUrl: '/%5C%5Cevil.example' });
    expect(f.callback.headers.get('location')).toBe('/');
  });

  it('the provider denying is 8 in query mode too', async () => {
    expectFailure(await flow(forceGet, null));
    expect(await lastRow(forceGet)).toMatchObject({ FailureTypeId: FailureTypeId.RemoteFailure, FailureMessage: expect.stringMatching(/access_denied/) });
  });
});

describe('exclusivity (service.md 5.2)', () => {
  it('with OAuth on, the username/password routes and Negotiate answer 404', async () => {
    await insertUser(formPost, { name: 'rita', password: 'Corr3ct-Horse-Battery' });
    const browser = new Browser(formPost.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'rita', password: 'Corr3ct-Horse-Battery' })).status).toBe(404);
    expect((await browser.get('/api/Authentication/ByNegotiate')).status).toBe(404);
    idp.accounts.set('sub-rita', { preferred_username: 'rita' });
    const f = await flow(formPost, 'sub-rita');
    const change = await f.browser.post('/api/Authentication/ChangePassword', {
      password: 'Corr3ct-Horse-Battery',
      newPassword: 'An0ther-Horse-Battery',
      repeatNewPassword: 'An0ther-Horse-Battery',
    }, { 'sec-fetch-site': 'same-origin' });
    expect(change.status).toBe(404);
  });

  it('without OAuth, the OAuth routes answer 404', async () => {
    expect((await new Browser(passwordOnly.url).get('/api/Authentication/OAuth/Login')).status).toBe(404);
    expect((await new Browser(passwordOnly.url).get(CALLBACK)).status).toBe(404);
    expect((await new Browser(passwordOnly.url).post(CALLBACK, {})).status).toBe(404);
  });
});
