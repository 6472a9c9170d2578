import { createHmac } from 'node:crypto';
import * as jwt from 'jsonwebtoken';
import { startTestApp, TEST_JWT_KEY, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { insertUser } from './helpers/users';

const STRONG = 'Corr3ct-Horse-Battery';
const SESSION = '/api/Authentication/Session';

function b64url(value: object | string): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

describe('sessions and tokens (contract 4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function signIn(name: string): Promise<{ browser: Browser; token: string }> {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
    expect(res.status).toBe(200);
    return { browser, token: res.json.token };
  }
  const bearer = (token: string) => new Browser(t.url).get(SESSION, { authorization: `Bearer ${token}` });

  it('carries the claims of contract 4 and answers the Session route for a bearer token', async () => {
    const { id } = await insertUser(t, { name: 'claims', password: STRONG });
    const { token } = await signIn('claims');
    const claims = jwt.decode(token, { complete: true })!;
    expect(claims.header).toMatchObject({ alg: 'HS256', typ: 'JWT' });
    const payload = claims.payload as Record<string, unknown>;
    expect(payload).toMatchObject({ sub: String(id), name: 'claims', sst: t.clock.nowMs(), iss: 'transaction-monitoring', aud: 'transaction-monitoring' });
    // The session's row (contract 14), named by a random UUID.
    expect(payload.sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(payload.exp).toBe(Math.floor((t.clock.nowMs() + 15 * 60_000) / 1000));
    const res = await bearer(token);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      userName: 'claims',
      userRegistryId: id,
      authenticationType: 'Bearer',
      sessionStartDate: new Date(t.clock.nowMs()).toISOString(),
      absoluteExpiration: new Date(t.clock.nowMs() + 12 * 3_600_000).toISOString(),
    });
    expect(res.setCookies).toEqual([]);
  });

  it('refuses alg none, another algorithm, a tampered signature and a foreign key', async () => {
    await insertUser(t, { name: 'tamper', password: STRONG });
    const { token } = await signIn('tamper');
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    const elevated = `${header}.${b64url({ ...claims, sub: '1' })}.${signature}`;
    const hs512 = jwt.sign(claims, TEST_JWT_KEY, { algorithm: 'HS512' });
    const foreign = jwt.sign(claims, 'another-key-another-key-another-key!!', { algorithm: 'HS256' });
    const flipped = `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    const wrongAudience = jwt.sign({ ...claims, aud: 'someone-else' }, TEST_JWT_KEY, { algorithm: 'HS256' });
    for (const forged of [none, elevated, hs512, foreign, flipped, wrongAudience, 'garbage', '']) {
      const res = await bearer(forged);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    // A correctly signed token still works, so the refusals above are about the forgery.
    expect((await bearer(token)).status).toBe(200);
    expect(createHmac('sha256', TEST_JWT_KEY).update(`${header}.${payload}`).digest('base64url')).toBe(signature);
  });

  it('refuses a token whose session began before TokensValidFrom', async () => {
    const { id } = await insertUser(t, { name: 'moved', password: STRONG });
    const { token } = await signIn('moved');
    expect((await bearer(token)).status).toBe(200);
    t.clock.advance(1000);
    await t.db.query(`UPDATE "UserRegistry" SET "TokensValidFrom" = $2 WHERE "Id" = $1`, [id, t.clock.now()]);
    expect((await bearer(token)).status).toBe(401);
    const fresh = await signIn('moved');
    expect((await bearer(fresh.token)).status).toBe(200);
  });

  it('refuses tokens of users deactivated, locked or deleted since the token was issued', async () => {
    for (const [name, change] of [
      ['deact', `"Active" = false`],
      ['locked', `"PasswordLocked" = true`],
      ['deleted', `"Deleted" = true`],
    ]) {
      const { id } = await insertUser(t, { name, password: STRONG });
      const { token } = await signIn(name);
      await t.db.query(`UPDATE "UserRegistry" SET ${change} WHERE "Id" = $1`, [id]);
      expect((await bearer(token)).status).toBe(401);
    }
  });

  it('expires a token after 15 minutes, with 30 seconds of skew', async () => {
    await insertUser(t, { name: 'expiring', password: STRONG });
    const { token } = await signIn('expiring');
    t.clock.advance(15 * 60_000 + 20_000);
    expect((await bearer(token)).status).toBe(200);
    t.clock.advance(15_000);
    expect((await bearer(token)).status).toBe(401);
  });

  it('slides a cookie session with fresh tokens that keep sst, until the absolute lifetime', async () => {
    await insertUser(t, { name: 'slider', password: STRONG });
    const { browser, token } = await signIn('slider');
    const sst = (jwt.decode(token) as { sst: number }).sst;
    let last = token;
    // Twelve hours of activity every ten minutes: each request renews the 15-minute token.
    for (let minutes = 10; minutes < 12 * 60; minutes += 10) {
      t.clock.advance(10 * 60_000);
      const res = await browser.get(SESSION);
      expect(res.status).toBe(200);
      const renewed = res.setCookies.map(parseSetCookie).find((c) => c.name === 'authentication-jwt')!;
      expect(renewed.value).not.toBe(last);
      expect((jwt.decode(renewed.value) as { sst: number }).sst).toBe(sst);
      expect((jwt.decode(renewed.value) as { sid: string }).sid).toBe((jwt.decode(token) as { sid: string }).sid);
      expect(res.json.sessionStartDate).toBe(new Date(sst).toISOString());
      last = renewed.value;
    }
    // The last token may not outlive the absolute lifetime (exp = min(now + 15 min, sst + 12 h)).
    expect((jwt.decode(last) as { exp: number }).exp).toBe(Math.floor((sst + 12 * 3_600_000) / 1000));
    t.clock.set(sst + 12 * 3_600_000);
    const ended = await browser.get(SESSION);
    expect(ended.status).toBe(401);
  });

  it('does not refresh bearer requests, and refuses the absolute lifetime without skew', async () => {
    await insertUser(t, { name: 'absolute', password: STRONG });
    const { token } = await signIn('absolute');
    const sst = (jwt.decode(token) as { sst: number }).sst;
    const late = jwt.sign(
      {
        sub: (jwt.decode(token) as { sub: string }).sub,
        name: 'absolute',
        sst,
        sid: (jwt.decode(token) as { sid: string }).sid,
        iat: Math.floor(sst / 1000),
        nbf: Math.floor(sst / 1000),
        exp: Math.floor(sst / 1000) + 13 * 3600,
        iss: 'transaction-monitoring',
        aud: 'transaction-monitoring',
      },
      TEST_JWT_KEY,
      { algorithm: 'HS256' },
    );
    t.clock.set(sst + 12 * 3_600_000 - 1000);
    expect((await bearer(late)).status).toBe(200);
    t.clock.set(sst + 12 * 3_600_000 + 1);
    expect((await bearer(late)).status).toBe(401);
  });

  it('refuses the request (503, fail closed) when the user row cannot be read', async () => {
    await insertUser(t, { name: 'outage', password: STRONG });
    const { token } = await signIn('outage');
    await t.db.query(`ALTER TABLE "UserRegistry" RENAME TO "UserRegistryAway"`);
    try {
      const res = await bearer(token);
      expect(res.status).toBe(503);
      expect(res.text).not.toMatch(/UserRegistry|relation|SELECT/);
    } finally {
      await t.db.query(`ALTER TABLE "UserRegistryAway" RENAME TO "UserRegistry"`);
    }
    expect((await bearer(token)).status).toBe(200);
  });
});

describe('persistent cookies and the explorer gate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { SessionCookie: 'False', SecureHttpCookie: 'True' } });
    await insertUser(t, { name: 'persistent', password: STRONG });
  });
  afterAll(async () => t.close());

  it('gives the cookies Expires with SessionCookie False, Secure and SameSite=Strict with SecureHttpCookie', async () => {
    const res = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'persistent', password: STRONG });
    for (const cookie of res.setCookies.map(parseSetCookie)) {
      expect(new Date(String(cookie.attributes.expires)).getTime()).toBe(new Date(res.json.expiration).getTime());
      expect(cookie.attributes.secure).toBe(true);
      expect(String(cookie.attributes.samesite).toLowerCase()).toBe('strict');
    }
  });

  it('serves the explorer only to an authenticated caller', async () => {
    const anonymous = new Browser(t.url);
    const page = await anonymous.get('/swagger/index.html', { accept: 'text/html,application/xhtml+xml' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/Account/Login?returnUrl=%2Fswagger%2Findex.html');
    const documentAnonymous = await anonymous.get('/swagger/v1/swagger.json', { accept: 'application/json' });
    expect(documentAnonymous.status).toBe(401);
    expect(documentAnonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);

    const signedIn = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'persistent', password: STRONG });
    const auth = { authorization: `Bearer ${signedIn.json.token}` };
    const html = await anonymous.get('/swagger/index.html', { ...auth, accept: 'text/html' });
    expect(html.status).toBe(200);
    expect(html.text).toMatch(/swagger/i);
    const document = await anonymous.get('/swagger/v1/swagger.json', auth);
    expect(document.status).toBe(200);
    expect(document.json.paths['/api/Authentication/ByUserNamePassword']).toBeDefined();
    expect(document.json.paths['/api/Authentication/Session'].get.security).toBeDefined();
  });
});

describe('two applications in one process', () => {
  it('each verifies sessions against its own database and clock', async () => {
    const a = await startTestApp();
    const b = await startTestApp();
    try {
      await insertUser(a, { name: 'only-on-a', password: STRONG });
      const res = await new Browser(a.url).post('/api/Authentication/ByUserNamePassword', { userName: 'only-on-a', password: STRONG });
      expect(res.status).toBe(200);
      // b started after a: a must still answer from its own database, b from its own.
      expect((await new Browser(a.url).get(SESSION, { authorization: `Bearer ${res.json.token}` })).status).toBe(200);
      expect((await new Browser(b.url).get(SESSION, { authorization: `Bearer ${res.json.token}` })).status).toBe(401);
      b.clock.advance(24 * 3_600_000);
      expect((await new Browser(a.url).get(SESSION, { authorization: `Bearer ${res.json.token}` })).status).toBe(200);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
