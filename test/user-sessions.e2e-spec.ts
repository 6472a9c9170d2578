import * as jwt from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';
import { Bus, CHANNELS } from '../src/bus/bus';
import { SessionActivityWriter } from '../src/guard/session-activity.writer';
import { SessionRetention } from '../src/session-store/session-retention.service';
import { StreamRegistry } from '../src/streams/stream-registry.service';
import { startTestApp, TEST_JWT_KEY, TestApp } from './helpers/app';
import { requestWithoutCookies, createKey } from './helpers/api-keys';
import { Browser, parseSetCookie } from './helpers/http';
import { openStream } from './helpers/streams';
import { insertUser, signInAdministrator } from './helpers/users';
import { AuthenticationTypeId, LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const NEWER = 'Newer-Corr3ct-Horse!';
const SESSION = '/api/Authentication/Session';
const SESSIONS = '/api/Authentication/Sessions';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface SessionRow {
  Id: string;
  UserRegistryId: number;
  TenantRegistryId: number | null;
  AuthenticationTypeId: number;
  CreatedDate: Date;
  LastSeenDate: Date;
  RemoteIp: string | null;
  UserAgent: string | null;
  EndedDate: Date | null;
  EndReasonId: number | null;
  EndedByUser: string | null;
}

interface LogoutRow {
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

const sidOf = (token: string) => (jwt.decode(token) as { sid: string }).sid;
const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

/** Waits for `probe` to hold, with a deadline generous enough for a loaded machine. */
async function eventually(probe: () => Promise<boolean>, what: string, deadlineMs = 60_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never happened: ${what}`);
}

/** Resolves true when `promise` settles within `ms`, false otherwise. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe('active sessions (contract 14)', () => {
  let t: TestApp;
  let admin: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin } = await signInAdministrator(t));
  });
  afterAll(async () => t.close());

  /** Signs `name` in with its own cookie jar; the clock then moves on so sessions start at distinct instants. */
  async function signIn(name: string, headers: Record<string, string> = {}, password = STRONG) {
    const browser = new Browser(t.url);
    const startedAt = t.clock.nowMs();
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password }, headers);
    expect(res.status).toBe(200);
    t.clock.advance(1000);
    return { browser, token: res.json.token as string, sid: sidOf(res.json.token), startedAt };
  }
  const bearer = (token: string, path = SESSION) => new Browser(t.url).get(path, { authorization: `Bearer ${token}` });
  const sessionRow = async (id: string) => (await t.db.query<SessionRow>(`SELECT * FROM "UserSession" WHERE "Id" = $1`, [id]))[0];
  const sessionRows = (userId: number) =>
    t.db.query<SessionRow>(`SELECT * FROM "UserSession" WHERE "UserRegistryId" = $1 ORDER BY "CreatedDate"`, [userId]);
  const logoutRows = (userId: number) =>
    t.db.query<LogoutRow>(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1 ORDER BY "Id"`, [userId]);

  it('a password sign-in creates the session row, field by field, and the token names it', async () => {
    const user = await insertUser(t, { name: 'row-check', password: STRONG, tenantName: 'Tenant Rows' });
    const agent = `Row\tAgent/1.0 ${'x'.repeat(600)}`;
    const { token, sid, startedAt } = await signIn('row-check', { 'user-agent': agent });
    expect(sid).toMatch(UUID);
    expect((jwt.decode(token) as { sst: number }).sst).toBe(startedAt);
    expect(await sessionRows(user.id)).toEqual([
      {
        Id: sid,
        UserRegistryId: user.id,
        TenantRegistryId: user.tenantRegistryId,
        AuthenticationTypeId: AuthenticationTypeId.UserNamePassword,
        CreatedDate: new Date(startedAt),
        LastSeenDate: new Date(startedAt),
        RemoteIp: '127.0.0.1',
        // Stripped of the tab (a control character), then cut to 512 characters (contract 9).
        UserAgent: `RowAgent/1.0 ${'x'.repeat(600)}`.slice(0, 512),
        EndedDate: null,
        EndReasonId: null,
        EndedByUser: null,
      },
    ]);
  });

  it('lists two sessions of one user, newest first, and ends one from the other', async () => {
    const user = await insertUser(t, { name: 'two-places', password: STRONG, tenantName: 'Tenant Two' });
    const first = await signIn('two-places', { 'user-agent': 'Laptop/1.0' });
    const second = await signIn('two-places', { 'user-agent': 'Phone/2.0' });

    const listed = await second.browser.get(SESSIONS);
    expect(listed.status).toBe(200);
    expect(listed.json).toEqual([
      {
        id: second.sid,
        createdDate: new Date(second.startedAt).toISOString(),
        lastSeenDate: new Date(second.startedAt).toISOString(),
        remoteIp: '127.0.0.1',
        userAgent: 'Phone/2.0',
        authenticationTypeId: AuthenticationTypeId.UserNamePassword,
        authenticationType: 'Username and Password',
        current: true,
      },
      {
        id: first.sid,
        createdDate: new Date(first.startedAt).toISOString(),
        lastSeenDate: new Date(first.startedAt).toISOString(),
        remoteIp: '127.0.0.1',
        userAgent: 'Laptop/1.0',
        authenticationTypeId: AuthenticationTypeId.UserNamePassword,
        authenticationType: 'Username and Password',
        current: false,
      },
    ]);
    // Seen from the first session, the first is the current one.
    expect((await first.browser.get(SESSIONS)).json.map((s: { id: string; current: boolean }) => [s.id, s.current])).toEqual([
      [second.sid, false],
      [first.sid, true],
    ]);

    const ended = await second.browser.delete(`${SESSIONS}/${first.sid}`, { 'user-agent': 'Phone/2.0 ending' });
    expect(ended.status).toBe(204);
    expect(ended.text).toBe('');
    // Not the current session: the caller keeps its session (the usual sliding refresh, no deletion).
    expect(ended.setCookies.map(parseSetCookie).every((c) => c.value !== '')).toBe(true);

    // The ended session is refused by cookie and by bearer; the other one goes on.
    expect((await first.browser.get(SESSION)).status).toBe(401);
    expect((await bearer(first.token)).status).toBe(401);
    expect((await second.browser.get(SESSION)).status).toBe(200);
    expect((await bearer(second.token)).status).toBe(200);
    expect((await second.browser.get(SESSIONS)).json.map((s: { id: string }) => s.id)).toEqual([second.sid]);

    const endedAt = t.clock.now();
    expect(await sessionRow(first.sid)).toMatchObject({
      EndedDate: endedAt,
      EndReasonId: LogoutReasonId.SessionEnded,
      EndedByUser: 'two-places',
      CreatedDate: new Date(first.startedAt),
    });
    expect(await sessionRow(second.sid)).toMatchObject({ EndedDate: null, EndReasonId: null, EndedByUser: null });
    expect(await logoutRows(user.id)).toEqual([
      expect.objectContaining({
        CreatedDate: endedAt,
        CreatedUser: 'two-places',
        UserRegistryId: user.id,
        TenantRegistryId: user.tenantRegistryId,
        ReasonId: LogoutReasonId.SessionEnded,
        OutcomeId: LogoutOutcomeId.Revoked,
        RemoteIp: '127.0.0.1',
        LocalIp: '127.0.0.1',
        UserAgent: 'Phone/2.0 ending',
        SessionStartDate: new Date(first.startedAt),
        CutByUser: 'two-places',
        Message: null,
      }),
    ]);
    // TokensValidFrom is not moved: ending one session leaves the others alone.
    const [registry] = await t.db.query<{ TokensValidFrom: Date | null }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [user.id]);
    expect(registry.TokensValidFrom).toBeNull();

    // The audit read names the reason, and filters by it.
    const audit = await admin.get(`/api/UserLogout?reasonId=4&search=two-places`);
    expect(audit.status).toBe(200);
    expect(audit.json.rows).toEqual([
      expect.objectContaining({ reasonId: LogoutReasonId.SessionEnded, reason: 'One session was ended', outcome: 'Revoked', cutByUser: 'two-places', createdUser: 'two-places' }),
    ]);
    expect((await admin.get(`/api/UserLogout?reasonId=1&search=two-places`)).json.rows).toEqual([]);
    expect((await admin.get(`/api/UserLogout?reasonId=5`)).status).toBe(400);

    // Ending it again: it is no longer among the open sessions.
    expect((await second.browser.delete(`${SESSIONS}/${first.sid}`)).status).toBe(404);
    expect(await logoutRows(user.id)).toHaveLength(1);
  });

  it('ending the current session answers 204, deletes both cookies, and the session is refused after', async () => {
    const user = await insertUser(t, { name: 'self-ending', password: STRONG });
    const { browser, token, sid, startedAt } = await signIn('self-ending');
    const cookie = cookieOf(browser);
    const res = await browser.delete(`${SESSIONS}/${sid}`);
    expect(res.status).toBe(204);
    const cookies = res.setCookies.map(parseSetCookie);
    expect(cookies.map((c) => c.name).sort()).toEqual(['authentication-expiry', 'authentication-jwt']);
    for (const c of cookies) {
      expect(c.value).toBe('');
      expect(new Date(String(c.attributes.expires)).getTime()).toBeLessThanOrEqual(Date.now());
    }
    expect(browser.cookies.size).toBe(0);
    expect((await new Browser(t.url).get(SESSION, { cookie })).status).toBe(401);
    expect((await bearer(token)).status).toBe(401);
    expect(await logoutRows(user.id)).toEqual([
      expect.objectContaining({ ReasonId: LogoutReasonId.SessionEnded, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'self-ending', SessionStartDate: new Date(startedAt) }),
    ]);
  });

  it('refuses another user\'s session id, an unknown id and a malformed id with 404, and changes nothing', async () => {
    await insertUser(t, { name: 'owner-a', password: STRONG });
    await insertUser(t, { name: 'other-b', password: STRONG });
    const a = await signIn('owner-a');
    const b = await signIn('other-b');
    for (const id of [b.sid, randomUUID(), 'not-a-uuid', `${b.sid}0`, b.sid.replace(/-/g, ''), "1' OR '1'='1", '%E2%82%AC']) {
      const res = await a.browser.delete(`${SESSIONS}/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
    expect((await b.browser.get(SESSION)).status).toBe(200);
    expect((await a.browser.get(SESSION)).status).toBe(200);
    expect((await sessionRow(b.sid)).EndedDate).toBeNull();
    // The id is matched case-insensitively, as a UUID is.
    expect((await a.browser.delete(`${SESSIONS}/${a.sid.toUpperCase()}`)).status).toBe(204);
  });

  it('refuses the own-session routes to an API key (401) and anonymous callers (401)', async () => {
    const user = await insertUser(t, { name: 'key-holder', password: STRONG });
    const { sid } = await signIn('key-holder');
    const key = await createKey(t, admin, user.id);
    for (const [method, path] of [
      ['GET', SESSIONS],
      ['DELETE', `${SESSIONS}/${sid}`],
    ]) {
      const withKey = await requestWithoutCookies(`${t.url}${path}`, method, { 'x-api-key': key.apiKey });
      expect(withKey.status).toBe(401);
      expect(withKey.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await requestWithoutCookies(`${t.url}${path}`, method)).status).toBe(401);
    }
    expect((await sessionRow(sid)).EndedDate).toBeNull();
    // An API key has no session: using it creates no row.
    expect((await requestWithoutCookies(`${t.url}${SESSION}`, 'GET', { 'x-api-key': key.apiKey })).status).toBe(200);
    expect(await sessionRows(user.id)).toHaveLength(1);
  });

  it('refuses a token without sid, with a malformed sid, naming no session, or naming another user\'s session', async () => {
    const user = await insertUser(t, { name: 'forger', password: STRONG });
    await insertUser(t, { name: 'victim', password: STRONG });
    const { token } = await signIn('forger');
    const victim = await signIn('victim');
    const claims = jwt.decode(token) as Record<string, unknown>;
    const sign = (payload: Record<string, unknown>) => jwt.sign(payload, TEST_JWT_KEY, { algorithm: 'HS256' });
    const { sid: _sid, ...withoutSid } = claims;
    void _sid;
    for (const forged of [
      sign(withoutSid),
      sign({ ...claims, sid: null }),
      sign({ ...claims, sid: 42 }),
      sign({ ...claims, sid: 'not-a-uuid' }),
      sign({ ...claims, sid: "00000000-0000-0000-0000-000000000000' OR 1=1 --" }),
      sign({ ...claims, sid: randomUUID() }),
      sign({ ...claims, sid: victim.sid }),
    ]) {
      const res = await bearer(forged);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const viaCookie = await new Browser(t.url).get(SESSION, { cookie: `authentication-jwt=${forged}` });
      expect(viaCookie.status).toBe(401);
    }
    // The genuine token still works, so the refusals are about the sid; and a malformed sid in one
    // request never fails the other requests read in the same batch.
    const together = await Promise.all([bearer(token), bearer(sign({ ...claims, sid: 'x' })), bearer(victim.token)]);
    expect(together.map((r) => r.status)).toEqual([200, 401, 200]);
    void user;
  });

  it('writes LastSeenDate at most once a minute per session, off the request path', async () => {
    await insertUser(t, { name: 'seen', password: STRONG });
    const { browser, sid, startedAt } = await signIn('seen');
    const writer = t.app.get(SessionActivityWriter);
    t.clock.set(startedAt + 30_000);
    expect((await browser.get(SESSION)).status).toBe(200);
    await writer.flush();
    expect((await sessionRow(sid)).LastSeenDate).toEqual(new Date(startedAt));

    t.clock.set(startedAt + 61_000);
    expect((await browser.get(SESSION)).status).toBe(200);
    // Written by the flush every second, not by the request.
    await eventually(async () => (await sessionRow(sid)).LastSeenDate.getTime() === startedAt + 61_000, 'LastSeenDate written');

    t.clock.set(startedAt + 100_000);
    for (let i = 0; i < 5; i++) expect((await browser.get(SESSION)).status).toBe(200);
    await writer.flush();
    expect((await sessionRow(sid)).LastSeenDate).toEqual(new Date(startedAt + 61_000));

    t.clock.set(startedAt + 125_000);
    expect((await browser.get(SESSION)).status).toBe(200);
    await eventually(async () => (await sessionRow(sid)).LastSeenDate.getTime() === startedAt + 125_000, 'LastSeenDate written again');
    const listed = await browser.get(SESSIONS);
    expect(listed.json[0]).toMatchObject({ id: sid, lastSeenDate: new Date(startedAt + 125_000).toISOString() });
  });

  describe('ended by an administrator', () => {
    it('a tenant administrator lists and ends a session of a user of its tenant', async () => {
      await insertUser(t, { name: 'chief-p', password: STRONG, tenantName: 'Tenant P', permissions: [Permission.ReadWriteSecurityUser] });
      const worker = await insertUser(t, { name: 'worker-p', password: STRONG, tenantName: 'Tenant P' });
      const chief = await signIn('chief-p');
      const one = await signIn('worker-p', { 'user-agent': 'Desk/1' });
      const two = await signIn('worker-p', { 'user-agent': 'Home/2' });

      const listed = await chief.browser.get(`/api/UserRegistry/${worker.id}/Sessions`);
      expect(listed.status).toBe(200);
      expect(listed.json).toEqual([
        expect.objectContaining({ id: two.sid, userAgent: 'Home/2', current: false, authenticationTypeId: AuthenticationTypeId.UserNamePassword }),
        expect.objectContaining({ id: one.sid, userAgent: 'Desk/1', current: false, authenticationTypeId: AuthenticationTypeId.UserNamePassword }),
      ]);

      const res = await chief.browser.delete(`/api/UserRegistry/${worker.id}/Sessions/${one.sid}`, { 'user-agent': 'Admin UI' });
      expect(res.status).toBe(204);
      expect((await bearer(one.token)).status).toBe(401);
      expect((await bearer(two.token)).status).toBe(200);
      expect((await chief.browser.get(SESSION)).status).toBe(200);
      expect(await sessionRow(one.sid)).toMatchObject({ EndedDate: t.clock.now(), EndReasonId: LogoutReasonId.SessionEnded, EndedByUser: 'chief-p' });
      expect(await logoutRows(worker.id)).toEqual([
        expect.objectContaining({
          CreatedUser: 'worker-p',
          UserRegistryId: worker.id,
          TenantRegistryId: worker.tenantRegistryId,
          ReasonId: LogoutReasonId.SessionEnded,
          OutcomeId: LogoutOutcomeId.Revoked,
          UserAgent: 'Admin UI',
          SessionStartDate: new Date(one.startedAt),
          CutByUser: 'chief-p',
        }),
      ]);
      // A session of that user named under another user of the tenant is not found there.
      const colleague = await insertUser(t, { name: 'colleague-p', password: STRONG, tenantName: 'Tenant P' });
      expect((await chief.browser.delete(`/api/UserRegistry/${colleague.id}/Sessions/${two.sid}`)).status).toBe(404);
      expect((await bearer(two.token)).status).toBe(200);
    });

    it('outside its tenant the administrator gets 404, as if the user did not exist, and nothing changes', async () => {
      await insertUser(t, { name: 'chief-q', password: STRONG, tenantName: 'Tenant Q', permissions: [Permission.ReadWriteSecurityUser] });
      const stranger = await insertUser(t, { name: 'stranger-r', password: STRONG, tenantName: 'Tenant R2' });
      const chief = await signIn('chief-q');
      const session = await signIn('stranger-r');
      const list = await chief.browser.get(`/api/UserRegistry/${stranger.id}/Sessions`);
      expect(list.status).toBe(404);
      expect(list.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const unknown = await chief.browser.get('/api/UserRegistry/999999/Sessions');
      expect(unknown.status).toBe(404);
      expect(unknown.json.detail).toBe(list.json.detail);
      expect((await chief.browser.delete(`/api/UserRegistry/${stranger.id}/Sessions/${session.sid}`)).status).toBe(404);
      expect((await bearer(session.token)).status).toBe(200);
      expect((await sessionRow(session.sid)).EndedDate).toBeNull();
      expect(await logoutRows(stranger.id)).toEqual([]);
      // The landlord administrator reaches every tenant.
      expect((await admin.get(`/api/UserRegistry/${stranger.id}/Sessions`)).json.map((s: { id: string }) => s.id)).toEqual([session.sid]);
      expect((await admin.delete(`/api/UserRegistry/${stranger.id}/Sessions/${session.sid}`)).status).toBe(204);
      expect((await bearer(session.token)).status).toBe(401);
      expect(await sessionRow(session.sid)).toMatchObject({ EndReasonId: LogoutReasonId.SessionEnded, EndedByUser: 'Administrator' });
      expect(await logoutRows(stranger.id)).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.SessionEnded, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'Administrator' })]);
    });

    it('answers 403 without permission 35, 400 for a malformed user id, 404 for a malformed or unknown session id', async () => {
      await insertUser(t, { name: 'plain-s', password: STRONG, tenantName: 'Tenant S2' });
      const target = await insertUser(t, { name: 'target-s', password: STRONG, tenantName: 'Tenant S2' });
      const plain = await signIn('plain-s');
      const session = await signIn('target-s');
      expect((await plain.browser.get(`/api/UserRegistry/${target.id}/Sessions`)).status).toBe(403);
      expect((await plain.browser.delete(`/api/UserRegistry/${target.id}/Sessions/${session.sid}`)).status).toBe(403);
      for (const id of ['abc', '0', '-1', '1e3', '99999999999']) {
        expect((await admin.get(`/api/UserRegistry/${id}/Sessions`)).status).toBe(400);
        expect((await admin.delete(`/api/UserRegistry/${id}/Sessions/${session.sid}`)).status).toBe(400);
      }
      for (const id of ['abc', randomUUID(), `${session.sid}-`, '00000000-0000-0000-0000-00000000000g']) {
        const res = await admin.delete(`/api/UserRegistry/${target.id}/Sessions/${id}`);
        expect(res.status).toBe(404);
      }
      expect((await bearer(session.token)).status).toBe(200);
    });
  });

  describe('every earlier way of ending sessions ends their rows', () => {
    /** Expects every session of the user ended at `at` with the reason and ender given. */
    async function expectAllEnded(userId: number, sids: string[], reasonId: number, endedBy: string, at: number) {
      for (const sid of sids) {
        expect(await sessionRow(sid)).toMatchObject({ EndedDate: new Date(at), EndReasonId: reasonId, EndedByUser: endedBy });
      }
    }

    it('logout ends every open session of the user (EndReasonId 1, by the user)', async () => {
      const user = await insertUser(t, { name: 'out-all', password: STRONG });
      const one = await signIn('out-all');
      const two = await signIn('out-all');
      expect((await one.browser.post('/api/Authentication/Logout')).status).toBe(200);
      await expectAllEnded(user.id, [one.sid, two.sid], 1, 'out-all', t.clock.nowMs());
      expect((await bearer(two.token)).status).toBe(401);
      expect(await logoutRows(user.id)).toEqual([
        expect.objectContaining({ ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'out-all', SessionStartDate: new Date(one.startedAt) }),
      ]);
    });

    it('RevokeTokens ends them (EndReasonId 2, by the administrator)', async () => {
      const user = await insertUser(t, { name: 'revoked-all', password: STRONG });
      const one = await signIn('revoked-all');
      const two = await signIn('revoked-all');
      expect((await admin.post(`/api/UserRegistry/RevokeTokens/${user.id}`)).status).toBe(204);
      await expectAllEnded(user.id, [one.sid, two.sid], 2, 'Administrator', t.clock.nowMs());
      expect((await bearer(one.token)).status).toBe(401);
    });

    it('ChangePassword ends the earlier ones (EndReasonId 3, by the user) and opens a new one', async () => {
      const user = await insertUser(t, { name: 'changer', password: STRONG });
      const one = await signIn('changer');
      const two = await signIn('changer');
      const res = await two.browser.post('/api/Authentication/ChangePassword', { password: STRONG, newPassword: NEWER, repeatNewPassword: NEWER });
      expect(res.status).toBe(200);
      await expectAllEnded(user.id, [one.sid, two.sid], 3, 'changer', t.clock.nowMs());
      const fresh = sidOf(res.json.token);
      expect(await sessionRow(fresh)).toMatchObject({ EndedDate: null, UserRegistryId: user.id, CreatedDate: t.clock.now() });
      expect((await bearer(res.json.token)).status).toBe(200);
      expect((await two.browser.get(SESSIONS)).json.map((s: { id: string; current: boolean }) => [s.id, s.current])).toEqual([[fresh, true]]);
      expect(await logoutRows(user.id)).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.PasswordChanged, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'changer' })]);
    });

    it('a sign-in with newPassword ends the earlier ones (EndReasonId 3, by the user)', async () => {
      const user = await insertUser(t, { name: 'renewer', password: STRONG });
      const one = await signIn('renewer');
      await t.db.query(`UPDATE "UserRegistry" SET "PasswordExpiryDate" = $2 WHERE "Id" = $1`, [user.id, t.clock.now()]);
      const res = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', {
        userName: 'renewer',
        password: STRONG,
        newPassword: NEWER,
        repeatNewPassword: NEWER,
      });
      expect(res.status).toBe(200);
      await expectAllEnded(user.id, [one.sid], 3, 'renewer', t.clock.nowMs());
      expect((await sessionRow(sidOf(res.json.token))).EndedDate).toBeNull();
    });

    it('an administrator\'s password reset ends them (EndReasonId 3, by the administrator)', async () => {
      const user = await insertUser(t, { name: 'reset-me', password: STRONG });
      const one = await signIn('reset-me');
      expect((await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: NEWER, wirePasswordHash: false })).status).toBe(204);
      await expectAllEnded(user.id, [one.sid], 3, 'Administrator', t.clock.nowMs());
    });

    it('deactivation and deletion end them (EndReasonId 2, by the administrator)', async () => {
      const deactivated = await insertUser(t, { name: 'to-deactivate', password: STRONG });
      const deleted = await insertUser(t, { name: 'to-delete', password: STRONG });
      const a = await signIn('to-deactivate');
      const b = await signIn('to-delete');
      expect((await admin.put(`/api/UserRegistry/${deactivated.id}`, { active: false })).status).toBe(200);
      await expectAllEnded(deactivated.id, [a.sid], 2, 'Administrator', t.clock.nowMs());
      t.clock.advance(1000);
      expect((await admin.delete(`/api/UserRegistry/${deleted.id}`)).status).toBe(204);
      await expectAllEnded(deleted.id, [b.sid], 2, 'Administrator', t.clock.nowMs());
    });
  });

  describe('streams of an ended session', () => {
    it('close within a second on this node; the user\'s other session keeps its stream', async () => {
      const { tenantRegistryId } = await insertUser(t, { name: 'streamer', password: STRONG });
      const one = await signIn('streamer');
      const two = await signIn('streamer');
      const streamOne = await openStream(`${t.url}/api/Watcher/Stream`, { cookie: cookieOf(one.browser) });
      const streamTwo = await openStream(`${t.url}/api/Watcher/Stream`, { cookie: cookieOf(two.browser) });
      expect(streamOne.status).toBe(200);
      await streamOne.waitFor((text) => text.length > 0);
      await streamTwo.waitFor((text) => text.length > 0);

      expect((await two.browser.delete(`${SESSIONS}/${one.sid}`)).status).toBe(204);
      expect(await within(streamOne.ended, 1000)).toBe(true);
      expect(streamTwo.isEnded()).toBe(false);
      // Tagged with the user's tenant: untagged Watcher messages reach landlord streams only (contract 13).
      await t.app.get(Bus).publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId, text: 'still here' }));
      await streamTwo.waitFor((text) => text.includes('still here'));
      streamTwo.abort();
    });

    it('are closed by the periodic re-check when the end was not announced (a session row ended elsewhere)', async () => {
      await insertUser(t, { name: 'quiet-end', password: STRONG });
      const one = await signIn('quiet-end');
      const stream = await openStream(`${t.url}/api/Watcher/Stream`, { authorization: `Bearer ${one.token}` });
      await stream.waitFor((text) => text.length > 0);
      const registry = t.app.get(StreamRegistry);
      await registry.recheck();
      expect(stream.isEnded()).toBe(false);
      await t.db.query(`UPDATE "UserSession" SET "EndedDate" = now(), "EndReasonId" = 4, "EndedByUser" = 'elsewhere' WHERE "Id" = $1`, [one.sid]);
      await registry.recheck();
      expect(await within(stream.ended, 5000)).toBe(true);
    });
  });

});

describe('the daily purge of ended sessions (contract 14)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function signIn(name: string) {
    const browser = new Browser(t.url);
    const startedAt = t.clock.nowMs();
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
    expect(res.status).toBe(200);
    t.clock.advance(1000);
    return { browser, sid: sidOf(res.json.token), startedAt };
  }
  const sessionRows = (userId: number) =>
    t.db.query<SessionRow>(`SELECT * FROM "UserSession" WHERE "UserRegistryId" = $1 ORDER BY "CreatedDate"`, [userId]);
  const logoutRows = (userId: number) =>
    t.db.query<LogoutRow>(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1 ORDER BY "Id"`, [userId]);

  it('deletes sessions ended longer ago than SessionRetention (30 days), and nothing else', async () => {
    const user = await insertUser(t, { name: 'purged', password: STRONG });
    const old = await signIn('purged');
    const keptOpen = await signIn('purged');
    expect((await keptOpen.browser.delete(`${SESSIONS}/${old.sid}`)).status).toBe(204);
    const oldEndedAt = t.clock.nowMs();
    t.clock.advance(20 * 86_400_000);
    const recent = await signIn('purged');
    const other = await signIn('purged');
    expect((await other.browser.delete(`${SESSIONS}/${recent.sid}`)).status).toBe(204);

    const retention = t.app.get(SessionRetention);
    t.clock.set(oldEndedAt + 30 * 86_400_000);
    expect(await retention.purge()).toBe(0);
    t.clock.set(oldEndedAt + 30 * 86_400_000 + 1);
    expect(await retention.purge()).toBe(1);
    const left = (await sessionRows(user.id)).map((row) => row.Id);
    expect(left.sort()).toEqual([keptOpen.sid, recent.sid, other.sid].sort());
    // UserLogout keeps the permanent record of the purged session.
    expect((await logoutRows(user.id)).map((row) => row.SessionStartDate)).toContainEqual(new Date(old.startedAt));
    // A session never ended ended when it reached the absolute lifetime (12 h): it goes 30 days after that.
    t.clock.set(keptOpen.startedAt + 12 * 3_600_000 + 30 * 86_400_000);
    expect(await retention.purge()).toBe(0);
    t.clock.advance(1);
    expect(await retention.purge()).toBe(1);
    expect((await sessionRows(user.id)).map((row) => row.Id).sort()).toEqual([recent.sid, other.sid].sort());
  });

  it('never deletes a session that may still be in use, and leaves it out of the lists once past the absolute lifetime', async () => {
    const user = await insertUser(t, { name: 'long-idle', password: STRONG });
    const { sid, startedAt } = await signIn('long-idle');
    t.clock.set(startedAt + 12 * 3_600_000 - 1000);
    expect(await t.app.get(SessionRetention).purge()).toBe(0);
    const { browser: admin } = await signInAdministrator(t);
    expect((await admin.get(`/api/UserRegistry/${user.id}/Sessions`)).json.map((s: { id: string }) => s.id)).toEqual([sid]);
    t.clock.set(startedAt + 12 * 3_600_000);
    expect((await admin.get(`/api/UserRegistry/${user.id}/Sessions`)).json).toEqual([]);
    expect((await sessionRows(user.id)).map((row) => row.Id)).toEqual([sid]);
  });
});

describe('SessionRetention setting', () => {
  it('purges by the configured retention', async () => {
    const t = await startTestApp({ env: { SessionRetention: 'h/1' } });
    try {
      const user = await insertUser(t, { name: 'short-lived', password: STRONG });
      const browser = new Browser(t.url);
      const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'short-lived', password: STRONG });
      expect(res.status).toBe(200);
      expect((await browser.delete(`${SESSIONS}/${sidOf(res.json.token)}`)).status).toBe(204);
      t.clock.advance(3_600_001);
      expect(await t.app.get(SessionRetention).purge()).toBe(1);
      expect(await t.db.query(`SELECT 1 FROM "UserSession" WHERE "UserRegistryId" = $1`, [user.id])).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
