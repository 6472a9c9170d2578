import { startTestApp, TestApp } from './helpers/app';
import { emptyAuditTrailsAsSuperuser } from './helpers/audit-log';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { AuthenticationTypeId, FailureTypeId, LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Tenant-Adm1n-Password!';
const MINUTE = 60_000;

describe('audit trail reads (service.md 4.2, contract 9)', () => {
  let t: TestApp;
  let landlord: Browser;
  let tenantA: Browser;
  let viewer: Browser;
  let tenantAId: number;
  let tenantBId: number;
  let aliceId: number;

  async function signIn(name: string): Promise<Browser> {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
    if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
    return browser;
  }

  const login = (row: { user: string | null; userId: number | null; tenant: number | null; failureTypeId?: number | null; minutesAgo: number; agent?: string; message?: string | null }) =>
    t.db.query(
      `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed", "FailureTypeId",
                                "FailureMessage", "RemoteIp", "LocalIp", "UserAgent")
       VALUES ($1, $2, $3, $4, 1, $5, $6, $7, '10.0.0.9', '10.0.0.1', $8)`,
      [new Date(t.clock.nowMs() - row.minutesAgo * MINUTE), row.user, row.userId, row.tenant, row.failureTypeId != null, row.failureTypeId ?? null, row.message ?? null, row.agent ?? 'Mozilla/5.0'],
    );

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: landlord } = await signInAdministrator(t));
    const admin = await insertUser(t, { name: 'admin-a', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityUser] });
    tenantAId = admin.tenantRegistryId;
    aliceId = (await insertUser(t, { name: 'alice', password: STRONG, tenantName: 'Tenant A' })).id;
    const other = await insertUser(t, { name: 'admin-b', password: STRONG, tenantName: 'Tenant B', permissions: [Permission.ReadWriteSecurityUser] });
    tenantBId = other.tenantRegistryId;
    await insertUser(t, { name: 'viewer-a', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityRole] });
    tenantA = await signIn('admin-a');
    viewer = await signIn('viewer-a');
    // Only the rows arranged below: the sign-ins above are in the trail too.
    await emptyAuditTrailsAsSuperuser(t.db);
    await login({ user: 'alice', userId: aliceId, tenant: tenantAId, minutesAgo: 5 });
    await login({ user: 'alice', userId: aliceId, tenant: tenantAId, failureTypeId: FailureTypeId.PasswordMismatch, minutesAgo: 4, agent: '=HYPERLINK("http://evil")' });
    await login({ user: 'bob-of-b', userId: other.id, tenant: tenantBId, minutesAgo: 3 });
    await login({ user: 'ghost', userId: null, tenant: null, failureTypeId: FailureTypeId.NoUser, minutesAgo: 2 });
    await login({ user: 'alice', userId: aliceId, tenant: tenantAId, minutesAgo: 90 });
  });
  afterAll(async () => t.close());

  it('answers UserLogin rows in camelCase with names next to codes, and statistics {}', async () => {
    const res = await landlord.get('/api/UserLogin');
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(4);
    expect(res.json.statistics).toEqual({});
    const failed = res.json.rows.find((r: any) => r.failureTypeId === FailureTypeId.PasswordMismatch);
    expect(Object.keys(failed)).toEqual([
      'id',
      'createdDate',
      'createdUser',
      'tenantRegistryId',
      'failed',
      'authenticationTypeId',
      'authenticationType',
      'failureTypeId',
      'failureReason',
      'failureMessage',
      'remoteIp',
      'localIp',
      'userAgent',
    ]);
    expect(failed).toMatchObject({
      createdUser: 'alice',
      tenantRegistryId: tenantAId,
      failed: true,
      authenticationTypeId: AuthenticationTypeId.UserNamePassword,
      authenticationType: 'Username and Password',
      failureReason: 'Password did not match',
      failureMessage: null,
      remoteIp: '10.0.0.9',
    });
    expect(typeof failed.id).toBe('number');
    // Newest first by default.
    expect(res.json.rows.map((r: any) => r.createdUser)).toEqual(['ghost', 'bob-of-b', 'alice', 'alice']);
  });

  it("scopes a tenant administrator to its own tenant's rows, without failures against unknown names", async () => {
    const res = await tenantA.get('/api/UserLogin');
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(2);
    expect(res.json.rows.every((r: any) => r.tenantRegistryId === tenantAId)).toBe(true);
    const ghost = await tenantA.get('/api/UserLogin?search=ghost');
    expect(ghost.json.total).toBe(0);
    const landlordGhost = await landlord.get('/api/UserLogin?search=GHO');
    expect(landlordGhost.json.rows).toEqual([expect.objectContaining({ createdUser: 'ghost', failureTypeId: FailureTypeId.NoUser, tenantRegistryId: null })]);
  });

  it('refuses a caller without permission 35 (403) and an anonymous caller (401)', async () => {
    expect((await viewer.get('/api/UserLogin')).status).toBe(403);
    expect((await viewer.get('/api/UserLogout')).status).toBe(403);
    expect((await new Browser(t.url).get('/api/UserLogin')).status).toBe(401);
  });

  it('reads UserLogout rows with reason, outcome, session length and cut-by user, scoped the same way', async () => {
    const cut = new Date(t.clock.nowMs() - MINUTE);
    await t.db.query(
      `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "RemoteIp",
                                 "UserAgent", "SessionStartDate", "CutByUser", "Message")
       VALUES ($1, 'alice', $2, $3, 2, 1, '10.0.0.9', 'Mozilla/5.0', $4, 'admin-a', 'revoked'),
              ($1, 'bob-of-b', NULL, $5, 1, 1, '10.0.0.8', 'curl', NULL, NULL, NULL),
              ($1, NULL, NULL, NULL, 1, 2, '10.0.0.7', 'curl', NULL, NULL, NULL)`,
      [cut, aliceId, tenantAId, new Date(cut.getTime() - 3_600_000), tenantBId],
    );
    const all = await landlord.get('/api/UserLogout?sortField=createdUser&sortDirection=asc');
    expect(all.json.total).toBe(3);
    const alice = all.json.rows.find((r: any) => r.createdUser === 'alice');
    expect(Object.keys(alice)).toEqual([
      'id',
      'createdDate',
      'createdUser',
      'tenantRegistryId',
      'reasonId',
      'reason',
      'outcomeId',
      'outcome',
      'remoteIp',
      'localIp',
      'userAgent',
      'sessionStartDate',
      'sessionSeconds',
      'cutByUser',
      'message',
    ]);
    expect(alice).toMatchObject({
      reasonId: LogoutReasonId.AdministratorRevoked,
      reason: 'An administrator revoked the sessions',
      outcomeId: LogoutOutcomeId.Revoked,
      outcome: 'Revoked',
      sessionSeconds: 3600,
      cutByUser: 'admin-a',
      sessionStartDate: new Date(cut.getTime() - 3_600_000).toISOString(),
    });
    const scoped = await tenantA.get('/api/UserLogout');
    expect(scoped.json.rows.map((r: any) => r.createdUser)).toEqual(['alice']);
    expect((await landlord.get('/api/UserLogout?search=ADMIN-A')).json.total).toBe(1);
  });

  it('exports CSV with a header of the row members and guards formula cells', async () => {
    const csv = await landlord.get('/api/UserLogin?format=csv&sortField=id&sortDirection=asc');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    expect(lines[0]).toBe(
      'id,createdDate,createdUser,tenantRegistryId,failed,authenticationTypeId,authenticationType,failureTypeId,failureReason,failureMessage,remoteIp,localIp,userAgent',
    );
    expect(lines).toHaveLength(5);
    expect(csv.text).toContain(`"'=HYPERLINK(""http://evil"")"`);
    const scoped = await tenantA.get('/api/UserLogin', { accept: 'text/csv' });
    expect(scoped.text.trim().split('\r\n')).toHaveLength(3);
  });

  it('answers 400 naming a bad parameter', async () => {
    const res = await landlord.get('/api/UserLogout?take=ten');
    expect(res.status).toBe(400);
    expect(res.json.errors).toEqual([expect.objectContaining({ field: 'take' })]);
  });
});
