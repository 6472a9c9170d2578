import * as jwt from 'jsonwebtoken';
import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { insertUser } from './helpers/users';

const STRONG = 'Corr3ct-Horse-Battery';

/**
 * The sliding refresh is its own step after authentication (contract 4: every cookie-authenticated
 * request gets a fresh token in fresh cookies). These pin where it happens: before the handler (the
 * Session answer names the new expiration), on a request the guard refuses for want of a permission,
 * on a page load (a public route that authenticates by itself), and nowhere for bearer callers.
 */
describe('sliding refresh', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    // A user of an ordinary tenant holding no permission at all.
    await insertUser(t, { name: 'plain-user', password: STRONG });
  });
  afterAll(async () => t.close());

  async function signIn(): Promise<{ browser: Browser; token: string }> {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'plain-user', password: STRONG });
    expect(res.status).toBe(200);
    return { browser, token: res.json.token };
  }
  const freshToken = (setCookies: string[]) => setCookies.map(parseSetCookie).find((c) => c.name === 'authentication-jwt')?.value;

  it('renews before the handler: the Session answer carries the refreshed token expiration', async () => {
    const { browser, token } = await signIn();
    t.clock.advance(5 * 60_000);
    const res = await browser.get('/api/Authentication/Session');
    expect(res.status).toBe(200);
    const renewed = freshToken(res.setCookies)!;
    expect(renewed).not.toBe(token);
    const exp = (jwt.decode(renewed) as { exp: number }).exp;
    expect(res.json.expiration).toBe(new Date(exp * 1000).toISOString());
    const expiry = res.setCookies.map(parseSetCookie).find((c) => c.name === 'authentication-expiry')!;
    expect(decodeURIComponent(expiry.value)).toBe(res.json.expiration);
  });

  it('renews a cookie request the guard refuses with 403 (authenticated, not permitted)', async () => {
    const { browser, token } = await signIn();
    t.clock.advance(60_000);
    const res = await browser.get('/api/TenantRegistry');
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const renewed = freshToken(res.setCookies);
    expect(renewed).toBeDefined();
    expect(renewed).not.toBe(token);
  });

  it('renews on a page load, which authenticates inside a public route', async () => {
    const { browser, token } = await signIn();
    t.clock.advance(60_000);
    const res = await browser.get('/Account/ChangePassword', { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(freshToken(res.setCookies)).not.toBe(token);
    expect(freshToken(res.setCookies)).toBeDefined();
  });

  it('sets no cookie for a bearer request, allowed or refused', async () => {
    const { token } = await signIn();
    const anonymous = new Browser(t.url);
    const allowed = await anonymous.get('/api/Authentication/Session', { authorization: `Bearer ${token}` });
    expect(allowed.status).toBe(200);
    expect(allowed.setCookies).toEqual([]);
    const refused = await anonymous.get('/api/TenantRegistry', { authorization: `Bearer ${token}` });
    expect(refused.status).toBe(403);
    expect(refused.setCookies).toEqual([]);
  });
});
