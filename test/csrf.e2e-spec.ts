import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies } from './helpers/api-keys';
import { insertUser } from './helpers/users';

const STRONG = 'Corr3ct-Horse-Battery';

/**
 * The origin check of contract 4, probed through real routes a landlord administrator may use, on a
 * user id that does not exist: let through, the route itself answers 404 and changes nothing;
 * refused by the check, 403 problem. (The check is a global guard, so it applies to routes Nest
 * matched; an unmatched path answers 404 whatever the headers, since nothing runs for it.)
 */
describe('CSRF origin check (contract 4, service.md 5.1.10)', () => {
  let t: TestApp;
  let cookie: string;
  let own: string;
  beforeAll(async () => {
    t = await startTestApp();
    own = t.url;
    await insertUser(t, { name: 'csrf', password: STRONG, landlord: true });
    const res = await requestWithoutCookies(`${t.url}/api/Authentication/ByUserNamePassword`, 'POST', {}, { userName: 'csrf', password: STRONG });
    cookie = res.setCookies.map((line) => line.split(';')[0]).join('; ');
  });
  afterAll(async () => t.close());

  // State-changing routes on a user that does not exist: 404 once let through, and nothing changes.
  const NO_USER = 999_999;
  const PROBES: Record<string, { path: string; body?: unknown }> = {
    POST: { path: `/api/UserRegistry/RevokeTokens/${NO_USER}` },
    PUT: { path: `/api/UserRegistry/${NO_USER}`, body: { email: 'nobody@example.com' } },
    DELETE: { path: `/api/UserRegistry/${NO_USER}` },
  };
  const attempt = (headers: Record<string, string>, method = 'POST', path = PROBES[method]?.path) =>
    requestWithoutCookies(`${t.url}${path}`, method, { cookie, ...headers }, PROBES[method]?.body);

  it.each([
    ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }, 403],
    ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }, 403],
    ['Sec-Fetch-Site same-origin', { 'sec-fetch-site': 'same-origin' }, 404],
    ['Sec-Fetch-Site none', { 'sec-fetch-site': 'none' }, 404],
    ['Sec-Fetch-Site wins over a matching Origin', { 'sec-fetch-site': 'cross-site', origin: 'OWN' }, 403],
    ['Origin equal to our own', { origin: 'OWN' }, 404],
    ['Origin in upper case', { origin: 'OWN_UPPER' }, 404],
    ['Origin of another site', { origin: 'https://evil.example' }, 403],
    ['Origin on another port', { origin: 'OWN_OTHER_PORT' }, 403],
    ['Origin null', { origin: 'null' }, 403],
    ['Origin wins over a matching Referer', { origin: 'https://evil.example', referer: 'OWN/page' }, 403],
    ['Referer on our own origin', { referer: 'OWN/Administration/Security/Users' }, 404],
    ['Referer of another site', { referer: 'https://evil.example/OWN' }, 403],
    ['none of the three', {}, 403],
  ])('%s', async (_, raw, expected) => {
    const port = new URL(own).port;
    const headers = Object.fromEntries(
      Object.entries(raw as Record<string, string>).map(([k, v]) => [
        k,
        v
          .replace('OWN_UPPER', own.toUpperCase())
          .replace('OWN_OTHER_PORT', own.replace(`:${port}`, `:${Number(port) + 1}`))
          .replace('OWN', own),
      ]),
    );
    const res = await attempt(headers);
    expect(res.status).toBe(expected);
    if (expected === 403) expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  // No route answers PATCH; the guard checks it all the same (csrf.guard.ts).
  it.each(['POST', 'PUT', 'DELETE'])('checks %s', async (method) => {
    expect((await attempt({ 'sec-fetch-site': 'cross-site' }, method)).status).toBe(403);
    expect((await attempt({ 'sec-fetch-site': 'same-origin' }, method)).status).toBe(404);
  });

  it('does not check GET', async () => {
    const res = await attempt({ 'sec-fetch-site': 'cross-site' }, 'GET', '/api/Authentication/Session');
    expect(res.status).toBe(200);
  });

  it('does not check a request with a Bearer token or x-api-key header: that credential decides (401 for a bad one)', async () => {
    expect((await attempt({ 'sec-fetch-site': 'cross-site', authorization: 'Bearer x' })).status).toBe(401);
    expect((await attempt({ 'sec-fetch-site': 'cross-site', 'x-api-key': 'x' })).status).toBe(401);
  });

  it('does not check a request without the session cookie: it is simply not authenticated', async () => {
    const res = await requestWithoutCookies(`${t.url}${PROBES.POST.path}`, 'POST', { 'sec-fetch-site': 'cross-site' });
    expect(res.status).toBe(401);
  });

  it('a refused request is not authenticated: no refreshed cookie, no row', async () => {
    const res = await requestWithoutCookies(`${t.url}/api/UserRegistry`, 'POST', { cookie, 'sec-fetch-site': 'cross-site' }, { name: 'planted', roleRegistryId: 1, active: true });
    expect(res.status).toBe(403);
    expect(res.setCookies).toEqual([]);
    expect(await t.db.query(`SELECT 1 FROM "UserRegistry" WHERE "Name" = 'planted'`)).toEqual([]);
  });

  it('an unmatched path answers 404 whatever the headers: nothing runs for it', async () => {
    expect((await requestWithoutCookies(`${t.url}/api/NoSuchRoute`, 'POST', { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(404);
    expect((await requestWithoutCookies(`${t.url}/api/UserRegistry/${NO_USER}`, 'PATCH', { cookie, 'sec-fetch-site': 'cross-site' })).status).toBe(404);
  });

  it('refuses a cross-site logout with the cookie, and the session survives', async () => {
    const res = await attempt({ 'sec-fetch-site': 'cross-site' }, 'POST', '/api/Authentication/Logout');
    expect(res.status).toBe(403);
    expect(res.setCookies).toEqual([]);
    const session = await requestWithoutCookies(`${t.url}/api/Authentication/Session`, 'GET', { cookie });
    expect(session.status).toBe(200);
  });
});
