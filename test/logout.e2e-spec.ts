import { connect } from 'node:net';
import { ANONYMOUS_LOGOUT_MEMORY, AnonymousLogoutLimiter } from '../src/sessions/anonymous-logout.limiter';
import { startTestApp, TestApp } from './helpers/app';
import { Browser, parseSetCookie } from './helpers/http';
import { insertUser } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';

interface LogoutRow {
  Id: string;
  CreatedDate: Date;
  CreatedUser: string | null;
  UserRegistryId: number | null;
  TenantRegistryId: number | null;
  ReasonId: number;
  OutcomeId: number;
  RemoteIp: string | null;
  LocalIp: string | null;
  UserAgent: string | null;
  SessionStartDate: Date | null;
  CutByUser: string | null;
  Message: string | null;
}

/** Both authentication cookies are deleted: each Set-Cookie has an Expires in the past or Max-Age=0. */
function expectBothCookiesDeleted(setCookies: string[]): void {
  const cookies = setCookies.map(parseSetCookie);
  for (const name of ['authentication-jwt', 'authentication-expiry']) {
    const lines = cookies.filter((c) => c.name === name);
    expect(lines.length).toBeGreaterThan(0);
    for (const cookie of lines) {
      const expires = cookie.attributes.expires;
      const maxAge = cookie.attributes['max-age'];
      const deleted =
        (typeof expires === 'string' && new Date(expires).getTime() < Date.now()) || (typeof maxAge === 'string' && Number(maxAge) <= 0);
      expect(deleted).toBe(true);
      expect(cookie.attributes.path).toBe('/');
    }
  }
  // Nothing but the deletions: the sliding refresh did not set a fresh cookie on the way out.
  expect(cookies.every((c) => c.name === 'authentication-jwt' || c.name === 'authentication-expiry')).toBe(true);
}

/** One HTTP/1.1 request written byte for byte, for headers fetch refuses to send. */
function rawRequest(url: string, head: Buffer): Promise<{ status: number; headers: string[]; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [headText, body = ''] = text.split('\r\n\r\n');
      const [statusLine, ...headers] = headText.split('\r\n');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

describe('logout (service.md 3.2, contract 4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  const rows = () => t.db.query<LogoutRow>(`SELECT * FROM "UserLogout" ORDER BY "Id"`);
  const rowsAfter = async (before: LogoutRow[]) => (await rows()).slice(before.length);
  /** Each test starts a minute after the last, so the anonymous-row limit of the previous one is over. */
  beforeEach(() => t.clock.advance(61_000));

  async function signedIn(name: string): Promise<{ browser: Browser; token: string; id: number; tenantRegistryId: number; signedInAt: number }> {
    const user = await insertUser(t, { name, password: STRONG });
    const browser = new Browser(t.url);
    const signedInAt = t.clock.nowMs();
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
    expect(res.status).toBe(200);
    t.clock.advance(1000);
    return { browser, token: res.json.token, id: user.id, tenantRegistryId: user.tenantRegistryId, signedInAt };
  }

  it('ends a valid session: 200, empty body, both cookies deleted, TokensValidFrom now, row 1/1, token refused after', async () => {
    const { browser, token, id, tenantRegistryId, signedInAt } = await signedIn('leaving');
    const before = await rows();
    const res = await browser.post('/api/Authentication/Logout', undefined, { 'user-agent': 'Leaving/1.0' });
    expect(res.status).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('x-service-logout-warning')).toBeNull();
    expectBothCookiesDeleted(res.setCookies);
    expect(res.setCookies.length).toBe(2);

    const [user] = await t.db.query<{ TokensValidFrom: Date }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(user.TokensValidFrom.getTime()).toBe(t.clock.nowMs());
    const added = await rowsAfter(before);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      CreatedUser: 'leaving',
      UserRegistryId: id,
      TenantRegistryId: tenantRegistryId,
      ReasonId: LogoutReasonId.UserLogout,
      OutcomeId: LogoutOutcomeId.Revoked,
      RemoteIp: '127.0.0.1',
      LocalIp: '127.0.0.1',
      UserAgent: 'Leaving/1.0',
      CutByUser: 'leaving',
    });
    expect(added[0].SessionStartDate!.getTime()).toBe(signedInAt);
    expect(added[0].CreatedDate.getTime()).toBe(t.clock.nowMs());

    // The token is refused from now on, by cookie and by bearer.
    const stolen = new Browser(t.url);
    stolen.cookies.set('authentication-jwt', token);
    expect((await stolen.get('/api/Authentication/Session')).status).toBe(401);
    expect((await stolen.get('/api/Authentication/Session', { authorization: `Bearer ${token}` })).status).toBe(401);
  });

  it('ends a bearer session the same way', async () => {
    const { token, id } = await signedIn('bearer-leaving');
    const before = await rows();
    const res = await fetch(`${t.url}/api/Authentication/Logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expectBothCookiesDeleted(res.headers.getSetCookie());
    expect(await rowsAfter(before)).toEqual([expect.objectContaining({ UserRegistryId: id, ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.Revoked })]);
    const after = await fetch(`${t.url}/api/Authentication/Session`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
  });

  it('without a session: 200, both cookies expired, one anonymous row 1/2 per address per minute', async () => {
    const before = await rows();
    const anonymous = new Browser(t.url);
    const first = await anonymous.post('/api/Authentication/Logout');
    expect(first.status).toBe(200);
    expect(first.text).toBe('');
    expectBothCookiesDeleted(first.setCookies);
    const added = await rowsAfter(before);
    expect(added).toEqual([
      expect.objectContaining({ CreatedUser: null, UserRegistryId: null, TenantRegistryId: null, ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.NoSession, RemoteIp: '127.0.0.1', SessionStartDate: null }),
    ]);
    // Again within the minute, and with a malformed cookie: answered the same, no new row.
    const malformed = new Browser(t.url);
    malformed.cookies.set('authentication-jwt', 'not.a.jwt');
    for (const res of [await anonymous.post('/api/Authentication/Logout'), await malformed.post('/api/Authentication/Logout')]) {
      expect(res.status).toBe(200);
      expectBothCookiesDeleted(res.setCookies);
    }
    expect(await rowsAfter(before)).toHaveLength(1);
    t.clock.advance(59_000);
    await anonymous.post('/api/Authentication/Logout');
    expect(await rowsAfter(before)).toHaveLength(1);
    t.clock.advance(1_000);
    await anonymous.post('/api/Authentication/Logout');
    expect(await rowsAfter(before)).toHaveLength(2);
  });

  it('treats an expired or an already revoked token as no session', async () => {
    const { browser, token, id } = await signedIn('expired-token');
    t.clock.advance(16 * 60_000);
    const before = await rows();
    const expired = await browser.post('/api/Authentication/Logout');
    expect(expired.status).toBe(200);
    expectBothCookiesDeleted(expired.setCookies);
    expect(await rowsAfter(before)).toEqual([expect.objectContaining({ OutcomeId: LogoutOutcomeId.NoSession, CreatedUser: null })]);
    const [user] = await t.db.query<{ TokensValidFrom: Date | null }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(user.TokensValidFrom).toBeNull();

    const second = await signedIn('revoked-token');
    expect((await second.browser.post('/api/Authentication/Logout')).status).toBe(200);
    t.clock.advance(61_000);
    const replay = new Browser(t.url);
    replay.cookies.set('authentication-jwt', second.token);
    const beforeReplay = await rows();
    const res = await replay.post('/api/Authentication/Logout');
    expect(res.status).toBe(200);
    expectBothCookiesDeleted(res.setCookies);
    expect(await rowsAfter(beforeReplay)).toEqual([expect.objectContaining({ OutcomeId: LogoutOutcomeId.NoSession, CreatedUser: null })]);
    void token;
  });

  it('an x-api-key request is not a browser session: nothing is revoked', async () => {
    const { browser, id } = await signedIn('with-key-header');
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // Cross-site on purpose: with x-api-key the origin check does not apply.
    const res = await fetch(`${t.url}/api/Authentication/Logout`, {
      method: 'POST',
      headers: { 'x-api-key': 'whatever', cookie, 'sec-fetch-site': 'cross-site' },
    });
    expect(res.status).toBe(200);
    expectBothCookiesDeleted(res.headers.getSetCookie());
    const [user] = await t.db.query<{ TokensValidFrom: Date | null }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(user.TokensValidFrom).toBeNull();
    expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
  });

  it('a GET logs nobody out', async () => {
    const { browser } = await signedIn('get-logout');
    const res = await browser.get('/api/Authentication/Logout');
    expect([404, 405]).toContain(res.status);
    expect(res.setCookies.some((line) => /authentication-jwt=;/.test(line))).toBe(false);
    expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
  });

  it('refuses a cookie logout that is not provably same-origin (403), and the session survives', async () => {
    const { browser } = await signedIn('cross-site-logout');
    const res = await browser.post('/api/Authentication/Logout', undefined, { 'sec-fetch-site': 'cross-site' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
  });

  it('when the revocation cannot be written: cookies deleted, 200, warning header, row 1/3', async () => {
    const { browser, token, id, signedInAt } = await signedIn('unrevokable');
    await t.db.query(`
      CREATE FUNCTION tm_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by test'; END $$`);
    await t.db.query(`CREATE TRIGGER tm_refuse_update BEFORE UPDATE ON "UserRegistry" FOR EACH ROW EXECUTE FUNCTION tm_refuse()`);
    const before = await rows();
    try {
      const res = await browser.post('/api/Authentication/Logout');
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers.get('x-service-logout-warning')).toBe('revocation-failed');
      expectBothCookiesDeleted(res.setCookies);
    } finally {
      await t.db.query(`DROP TRIGGER tm_refuse_update ON "UserRegistry"`);
    }
    const added = await rowsAfter(before);
    expect(added).toEqual([expect.objectContaining({ CreatedUser: 'unrevokable', UserRegistryId: id, ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.RevocationFailed })]);
    expect(added[0].SessionStartDate!.getTime()).toBe(signedInAt);
    // Nothing was revoked: the token stays valid until it expires.
    const [user] = await t.db.query<{ TokensValidFrom: Date | null }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(user.TokensValidFrom).toBeNull();
    expect((await fetch(`${t.url}/api/Authentication/Session`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);

    // Even the failure row cannot be written: still 200 with the warning.
    await t.db.query(`CREATE TRIGGER tm_refuse_update BEFORE UPDATE ON "UserRegistry" FOR EACH ROW EXECUTE FUNCTION tm_refuse()`);
    await t.db.query(`CREATE TRIGGER tm_refuse_insert BEFORE INSERT ON "UserLogout" FOR EACH ROW EXECUTE FUNCTION tm_refuse()`);
    const beforeBoth = await rows();
    try {
      const again = new Browser(t.url);
      again.cookies.set('authentication-jwt', token);
      const res = await again.post('/api/Authentication/Logout');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-logout-warning')).toBe('revocation-failed');
      expectBothCookiesDeleted(res.setCookies);
    } finally {
      await t.db.query(`DROP TRIGGER tm_refuse_update ON "UserRegistry"`);
      await t.db.query(`DROP TRIGGER tm_refuse_insert ON "UserLogout"`);
    }
    expect(await rowsAfter(beforeBoth)).toEqual([]);
  });

  it('when the database can neither read the user nor revoke: the token still names the user; warning, row 1/3', async () => {
    const { browser, id, signedInAt } = await signedIn('database-trouble');
    await t.db.query(`ALTER TABLE "UserRegistry" RENAME TO "UserRegistryAway"`);
    const before = await rows();
    try {
      const res = await browser.post('/api/Authentication/Logout');
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers.get('x-service-logout-warning')).toBe('revocation-failed');
      expectBothCookiesDeleted(res.setCookies);
    } finally {
      await t.db.query(`ALTER TABLE "UserRegistryAway" RENAME TO "UserRegistry"`);
    }
    const added = await rowsAfter(before);
    expect(added).toEqual([expect.objectContaining({ CreatedUser: 'database-trouble', UserRegistryId: id, ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.RevocationFailed })]);
    expect(added[0].SessionStartDate!.getTime()).toBe(signedInAt);
  });

  it('stores a hostile user agent as inert text: control characters removed, cut to 512', async () => {
    const { browser } = await signedIn('hostile-agent');
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const hostile = Buffer.concat([
      Buffer.from(`<script>alert(1)</script>'); DROP TABLE "UserLogout";--\t`, 'latin1'),
      Buffer.from([0x85, 0x9b, 0x80, 0x9f]), // C1 controls, which HTTP lets through as obs-text
      Buffer.from('A'.repeat(5000), 'latin1'),
    ]);
    const head = Buffer.concat([
      Buffer.from(
        `POST /api/Authentication/Logout HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\nSec-Fetch-Site: same-origin\r\n` +
          `Cookie: ${cookie}\r\nContent-Length: 0\r\nConnection: close\r\nUser-Agent: `,
        'latin1',
      ),
      hostile,
      Buffer.from('\r\n\r\n', 'latin1'),
    ]);
    const before = await rows();
    const res = await rawRequest(t.url, head);
    expect(res.status).toBe(200);
    const [row] = await rowsAfter(before);
    expect(row.OutcomeId).toBe(LogoutOutcomeId.Revoked);
    const expected = `<script>alert(1)</script>'); DROP TABLE "UserLogout";--${'A'.repeat(5000)}`.slice(0, 512);
    expect(row.UserAgent).toBe(expected);
    expect(row.UserAgent).toHaveLength(512);
    expect(row.UserAgent).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect((await t.db.query(`SELECT count(*) FROM "UserLogout"`)).length).toBe(1);
  });

  it('keeps a bounded memory of anonymous addresses (the fallback when the shared store does not answer)', async () => {
    const service = t.app.get(AnonymousLogoutLimiter) as unknown as { remembered: Map<string, number>; claimInMemory(a: string, now: number): boolean };
    const now = () => t.clock.nowMs();
    for (let i = 0; i < ANONYMOUS_LOGOUT_MEMORY + 500; i++) service.claimInMemory(`10.0.${i >> 8}.${i & 255}`, now());
    expect(service.remembered.size).toBeLessThanOrEqual(ANONYMOUS_LOGOUT_MEMORY);
    // The newest are remembered; a minute later everything is forgotten.
    expect(service.claimInMemory(`10.0.${(ANONYMOUS_LOGOUT_MEMORY + 499) >> 8}.${(ANONYMOUS_LOGOUT_MEMORY + 499) & 255}`, now())).toBe(false);
    t.clock.advance(60_000);
    expect(service.claimInMemory('10.0.0.0', now())).toBe(true);
    expect(service.remembered.size).toBe(1);
  });
});
