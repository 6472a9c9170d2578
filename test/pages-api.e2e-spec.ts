import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { FailureTypeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';

/**
 * The API additions the pages rely on (issue 14), over HTTP: the UserLogin filters `failed` and
 * `failureTypeId` and the search of the reason shown; the API key history behind
 * `includeRevoked=true` with the default answer unchanged; the roles a user administrator may give;
 * and the sign-in redirect that says why a session is gone.
 */
describe('API behind the administration pages', () => {
  let t: TestApp;
  let admin: Browser;
  let token: string;

  const signIn = async (userName: string, password = STRONG) => {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName, password });
    expect(res.status).toBe(200);
    return browser;
  };

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token } = await signInAdministrator(t));
  });
  afterAll(async () => t?.close());

  describe('GET /api/UserLogin filters', () => {
    beforeAll(async () => {
      await insertUser(t, { name: 'ana', password: STRONG, tenantName: 'Bank South' });
      await insertUser(t, { name: 'south.admin', password: STRONG, tenantName: 'Bank South', permissions: [Permission.ReadWriteSecurityUser] });
      await insertUser(t, { name: 'starter', password: STRONG, tenantName: 'Bank South', expired: true });
      const http = new Browser(t.url);
      await http.post('/api/Authentication/ByUserNamePassword', { userName: 'ana', password: 'Wrong-password-1' });
      await http.post('/api/Authentication/ByUserNamePassword', { userName: 'ana', password: 'Wrong-password-2' });
      await http.post('/api/Authentication/ByUserNamePassword', { userName: 'ana', password: STRONG });
      await http.post('/api/Authentication/ByUserNamePassword', { userName: 'starter', password: STRONG });
      await http.post('/api/Authentication/ByUserNamePassword', { userName: 'no.such.user', password: STRONG });
    });

    const rows = async (query: string, who: Browser = admin) => {
      const res = await who.get(`/api/UserLogin?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
      return res.json as { total: number; rows: { createdUser: string; failed: boolean; failureTypeId: number | null; failureReason: string | null }[] };
    };

    it('failed=true keeps failures only, failed=false successes only', async () => {
      const [{ failures, successes }] = await t.db.query<{ failures: string; successes: string }>(
        `SELECT count(*) FILTER (WHERE "Failed") AS failures, count(*) FILTER (WHERE NOT "Failed") AS successes FROM "UserLogin"`,
      );
      const failed = await rows('failed=true');
      expect(failed.total).toBe(Number(failures));
      expect(failed.rows.every((r) => r.failed)).toBe(true);
      const succeeded = await rows('failed=FALSE');
      expect(succeeded.total).toBe(Number(successes));
      expect(succeeded.rows.every((r) => !r.failed && r.failureTypeId === null)).toBe(true);
    });

    it('failureTypeId=N keeps that reason only, and combines with the others', async () => {
      const mismatch = await rows('failureTypeId=5');
      expect(mismatch.rows.map((r) => [r.createdUser, r.failureTypeId, r.failureReason])).toEqual(
        expect.arrayContaining([['ana', 5, 'Password did not match']]),
      );
      expect(new Set(mismatch.rows.map((r) => r.failureTypeId))).toEqual(new Set([5]));
      expect((await rows('failureTypeId=5&search=ana')).total).toBe(2);
      expect((await rows('failureTypeId=5&failed=false')).total).toBe(0);
      expect((await rows('failureTypeId=4')).rows.map((r) => r.createdUser)).toEqual(['starter']);
      // Every reason of the list is accepted, the throttling one (contract 13) included.
      expect((await rows('failureTypeId=12')).total).toBe(0);
      // A tenant administrator still sees only its own tenant; the unknown name is the landlord's to see.
      const south = await signIn('south.admin');
      expect((await rows('failureTypeId=1', south)).total).toBe(0);
      expect((await rows('failureTypeId=1')).rows.map((r) => r.createdUser)).toEqual(['no.such.user']);
    });

    it('search matches the failure reason as the grid shows it, not only the stored text', async () => {
      const [{ count }] = await t.db.query<{ count: string }>(`SELECT count(*) FROM "UserLogin" WHERE "FailureTypeId" = $1`, [FailureTypeId.PasswordMismatch]);
      const found = await rows('search=did%20not%20MATCH');
      // ana's two wrong passwords, and the Administrator's first attempt in signInAdministrator.
      expect(found.total).toBe(Number(count));
      expect(found.total).toBe(3);
      expect(found.rows.every((r) => r.failureReason === 'Password did not match')).toBe(true);
      expect((await rows('search=no%20new%20password')).rows.map((r) => r.createdUser)).toEqual(['starter']);
      // Wildcards in the search are text, here as in the stored columns.
      expect((await rows('search=did%25match')).total).toBe(0);
    });

    it('refuses a bad filter value with a 400 naming it', async () => {
      for (const [query, field, message] of [
        ['failed=yes', 'failed', 'failed must be true or false.'],
        ['failed=1', 'failed', 'failed must be true or false.'],
        ['failureTypeId=abc', 'failureTypeId', 'failureTypeId must be a whole number.'],
        ['failureTypeId=99', 'failureTypeId', /^failureTypeId must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15\.$/],
        ['failureTypeId=0', 'failureTypeId', /^failureTypeId must be one of/],
        ['failureTypeId=5&failureTypeId=6', 'failureTypeId', 'failureTypeId must be given once.'],
      ] as const) {
        const res = await admin.get(`/api/UserLogin?${query}`);
        expect({ query, status: res.status }).toEqual({ query, status: 400 });
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(res.json.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
      }
    });

    it('the CSV export takes the same filters', async () => {
      const res = await admin.get('/api/UserLogin?failureTypeId=5&format=csv');
      expect(res.status).toBe(200);
      const lines = res.text.trim().split(/\r?\n/);
      expect(lines).toHaveLength(1 + 3);
      expect(lines.slice(1).every((line) => line.includes('Password did not match'))).toBe(true);
    });

    it('the OpenAPI document describes the new parameters', async () => {
      const document = (await new Browser(t.url).get('/swagger/v1/swagger.json', { authorization: `Bearer ${token}` })).json;
      const parameters = document.paths['/api/UserLogin'].get.parameters as { name: string; schema: { type: string; enum?: number[] }; description: string }[];
      const failed = parameters.find((p) => p.name === 'failed')!;
      expect(failed.schema.type).toBe('boolean');
      const reason = parameters.find((p) => p.name === 'failureTypeId')!;
      expect(reason.schema).toEqual(expect.objectContaining({ type: 'integer', enum: expect.arrayContaining([1, 5, 11]) }));
      expect(parameters.find((p) => p.name === 'search')!.description).toMatch(/failureReason/);
      const keys = document.paths['/api/UserRegistry/{id}/ApiKey'].get.parameters as { name: string; schema: { type: string } }[];
      expect(keys.find((p) => p.name === 'includeRevoked')!.schema.type).toBe('boolean');
      expect(document.paths['/api/RoleRegistry/Assignable'].get.responses['403'].description).toMatch(/permission 35/);
    });
  });

  describe('GET /api/UserRegistry/{id}/ApiKey?includeRevoked=true', () => {
    it('lists revoked keys after the active ones with when and by whom; the default answer is unchanged', async () => {
      const { id } = await insertUser(t, { name: 'integration', password: STRONG });
      const kept = (await admin.post(`/api/UserRegistry/${id}/ApiKey`, { name: 'Kept' })).json;
      const gone = (await admin.post(`/api/UserRegistry/${id}/ApiKey`, { name: 'Gone', description: 'Replaced' })).json;
      t.clock.advance(5_000);
      expect((await admin.request('DELETE', `/api/UserRegistry/${id}/ApiKey/${gone.id}`)).status).toBe(204);

      const plain = await admin.get(`/api/UserRegistry/${id}/ApiKey`);
      expect(plain.status).toBe(200);
      expect(plain.json).toEqual([
        { id: kept.id, name: 'Kept', description: null, apiKeyDisplay: kept.apiKeyDisplay, createdDate: kept.createdDate, createdUser: 'Administrator', lastUsedDate: null, lastUsedUserAgent: null },
      ]);
      expect((await admin.get(`/api/UserRegistry/${id}/ApiKey?includeRevoked=false`)).json).toEqual(plain.json);

      const history = await admin.get(`/api/UserRegistry/${id}/ApiKey?includeRevoked=true`);
      expect(history.status).toBe(200);
      expect(history.json).toEqual([
        { ...plain.json[0], revoked: false, revokedDate: null, revokedBy: null },
        {
          id: gone.id,
          name: 'Gone',
          description: 'Replaced',
          apiKeyDisplay: gone.apiKeyDisplay,
          createdDate: gone.createdDate,
          createdUser: 'Administrator',
          lastUsedDate: null,
          lastUsedUserAgent: null,
          revoked: true,
          revokedDate: new Date(t.clock.nowMs()).toISOString(),
          revokedBy: 'Administrator',
        },
      ]);
      // Neither the hash nor the clear value is ever part of it.
      expect(history.text).not.toContain(kept.apiKey);
    });

    it('refuses an includeRevoked that is not true or false, and keeps the tenant scope', async () => {
      const { id } = await insertUser(t, { name: 'other.tenant.user', password: STRONG, tenantName: 'Bank East' });
      for (const value of ['yes', '1', '']) {
        const res = await admin.get(`/api/UserRegistry/${id}/ApiKey?includeRevoked=${value}`);
        expect({ value, status: res.status }).toEqual({ value, status: 400 });
        expect(res.json.errors).toEqual([{ field: 'includeRevoked', message: 'includeRevoked must be true or false.' }]);
      }
      await insertUser(t, { name: 'west.admin', password: STRONG, tenantName: 'Bank West', permissions: [Permission.ReadWriteSecurityUser] });
      const west = await signIn('west.admin');
      expect((await west.get(`/api/UserRegistry/${id}/ApiKey?includeRevoked=true`)).status).toBe(404);
    });
  });

  describe('GET /api/RoleRegistry/Assignable', () => {
    it('offers a landlord every role, and a user administrator only the roles of its tenant it could give', async () => {
      const weak = await insertUser(t, { name: 'north.users', password: STRONG, tenantName: 'Bank North', permissions: [Permission.ReadWriteSecurityUser] });
      const strong = await insertUser(t, { name: 'north.roles', password: STRONG, tenantName: 'Bank North', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
      const plain = await insertUser(t, { name: 'north.teller', password: STRONG, tenantName: 'Bank North' });
      await insertUser(t, { name: 'elsewhere', password: STRONG, tenantName: 'Bank Far' });

      const all = await admin.get('/api/RoleRegistry/Assignable');
      expect(all.status).toBe(200);
      expect(all.json).toEqual((await admin.get('/api/RoleRegistry')).json);

      const north = await signIn('north.users');
      const offered = await north.get('/api/RoleRegistry/Assignable');
      expect(offered.status).toBe(200);
      // Its own role (35) and the teller's (none); never the role holding 34 it does not hold, nor another tenant's.
      expect(offered.json.map((r: { id: number }) => r.id).sort()).toEqual([weak.roleRegistryId, plain.roleRegistryId].sort());
      expect(offered.json.every((r: { tenantName: string }) => r.tenantName === 'Bank North')).toBe(true);
      expect(offered.json.map((r: { id: number }) => r.id)).not.toContain(strong.roleRegistryId);
      // What it is offered, it can indeed give.
      const created = await north.post('/api/UserRegistry', { name: 'north.new', roleRegistryId: plain.roleRegistryId, password: 'A-Strong-Passw0rd', active: true });
      expect(created.status).toBe(201);
      expect((await north.post('/api/UserRegistry', { name: 'north.bad', roleRegistryId: strong.roleRegistryId, password: 'A-Strong-Passw0rd', active: true })).status).toBe(403);

      const teller = await signIn('north.teller');
      expect((await teller.get('/api/RoleRegistry/Assignable')).status).toBe(403);
    });
  });

  describe('UserLogout rows of an end of every session say when the sessions began', () => {
    it('RevokeTokens: the earliest live session and how many; a forced change at sign-in: none was open', async () => {
      const { id } = await insertUser(t, { name: 'sam', password: STRONG });
      const firstAt = t.clock.nowMs();
      await signIn('sam');
      t.clock.advance(90_000);
      await signIn('sam');
      t.clock.advance(30_000);
      expect((await admin.post(`/api/UserRegistry/RevokeTokens/${id}`)).status).toBe(204);
      const [row] = await t.db.query<{ SessionStartDate: Date; Message: string; ReasonId: number }>(
        `SELECT "SessionStartDate", "Message", "ReasonId" FROM "UserLogout" WHERE "UserRegistryId" = $1`,
        [id],
      );
      expect(row).toEqual({ SessionStartDate: new Date(firstAt), Message: '2 sessions ended; the session start is the earliest.', ReasonId: LogoutReasonId.AdministratorRevoked });
      const read = await admin.get('/api/UserLogout?search=sam');
      expect(read.json.rows).toEqual([expect.objectContaining({ createdUser: 'sam', sessionStartDate: new Date(firstAt).toISOString(), sessionSeconds: 120 })]);

      // A new user's forced first change: no session was open, so there is no start to name.
      const starter = await insertUser(t, { name: 'sam.starter', password: STRONG, expired: true });
      const changed = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', {
        userName: 'sam.starter',
        password: STRONG,
        newPassword: 'A-New-Passw0rd-Sam',
        repeatNewPassword: 'A-New-Passw0rd-Sam',
      });
      expect(changed.status).toBe(200);
      const rows = await t.db.query(`SELECT "ReasonId", "SessionStartDate", "Message" FROM "UserLogout" WHERE "UserRegistryId" = $1`, [starter.id]);
      expect(rows).toEqual([{ ReasonId: LogoutReasonId.PasswordChanged, SessionStartDate: null, Message: null }]);

      // Deactivation of a user with one session: its start, no count.
      const dee = await insertUser(t, { name: 'dee', password: STRONG });
      const deeAt = t.clock.nowMs();
      await signIn('dee');
      t.clock.advance(5_000);
      expect((await admin.put(`/api/UserRegistry/${dee.id}`, { active: false })).status).toBe(200);
      expect(await t.db.query(`SELECT "ReasonId", "SessionStartDate", "Message" FROM "UserLogout" WHERE "UserRegistryId" = $1`, [dee.id])).toEqual([
        { ReasonId: LogoutReasonId.AdministratorRevoked, SessionStartDate: new Date(deeAt), Message: null },
      ]);
    });
  });

  describe('the sign-in redirect says why the session is gone', () => {
    it('ended by an administrator: session=ended, the dead cookies cleared; expired: session=expired; never signed in: nothing', async () => {
      const { id } = await insertUser(t, { name: 'rita', password: STRONG, permissions: [Permission.ReadWriteSecurityUser] });
      const rita = await signIn('rita');
      expect((await rita.get('/Administration/Security/Users', { accept: 'text/html' })).status).toBe(200);
      t.clock.advance(1_000);
      expect((await admin.post(`/api/UserRegistry/RevokeTokens/${id}`)).status).toBe(204);

      const ended = await rita.get('/Administration/Security/Users?user=x', { accept: 'text/html' });
      expect(ended.status).toBe(302);
      expect(ended.headers.get('location')).toBe(`/Account/Login?returnUrl=${encodeURIComponent('/Administration/Security/Users?user=x')}&session=ended`);
      expect(ended.setCookies.some((c) => /^authentication-jwt=;/.test(c))).toBe(true);
      expect((await rita.get('/', { accept: 'text/html' })).headers.get('location')).toBe('/Account/Login?returnUrl=%2F');

      const later = await signIn('rita');
      t.clock.advance(16 * 60_000);
      expect((await later.get('/', { accept: 'text/html' })).headers.get('location')).toBe('/Account/Login?returnUrl=%2F&session=expired');

      expect((await new Browser(t.url).get('/', { accept: 'text/html' })).headers.get('location')).toBe('/Account/Login?returnUrl=%2F');
    });
  });
});
