import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies } from './helpers/api-keys';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';

describe('RevokeTokens (service.md 3.2, contract 4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  async function signIn(name: string): Promise<Browser> {
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG })).status).toBe(200);
    return browser;
  }

  it('ends every session of a user of the caller\'s tenant: 204, TokensValidFrom, row ReasonId 2 with CutByUser', async () => {
    await insertUser(t, { name: 'boss', password: STRONG, tenantName: 'Tenant R', permissions: [Permission.ReadWriteSecurityUser] });
    const target = await insertUser(t, { name: 'worker', password: STRONG, tenantName: 'Tenant R' });
    const boss = await signIn('boss');
    const worker = await signIn('worker');
    const signedInAt = t.clock.nowMs();
    t.clock.advance(1000);
    const res = await boss.post(`/api/UserRegistry/RevokeTokens/${target.id}`, undefined, { 'user-agent': 'Admin UI' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const [user] = await t.db.query<{ TokensValidFrom: Date }>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`, [target.id]);
    expect(user.TokensValidFrom.getTime()).toBe(t.clock.nowMs());
    const rows = await t.db.query(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`, [target.id]);
    expect(rows).toEqual([
      expect.objectContaining({ CreatedUser: 'worker', TenantRegistryId: target.tenantRegistryId, ReasonId: LogoutReasonId.AdministratorRevoked, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'boss', UserAgent: 'Admin UI' }),
    ]);
    expect((await worker.get('/api/Authentication/Session')).status).toBe(401);
    expect((await boss.get('/api/Authentication/Session')).status).toBe(200);
    void signedInAt;
  });

  it('answers 404 for another tenant\'s user and for an unknown id, 403 without the permission, 401 anonymous', async () => {
    await insertUser(t, { name: 'boss-s', password: STRONG, tenantName: 'Tenant S', permissions: [Permission.ReadWriteSecurityUser] });
    await insertUser(t, { name: 'nobody-s', password: STRONG, tenantName: 'Tenant S' });
    const foreign = await insertUser(t, { name: 'foreigner', password: STRONG, tenantName: 'Tenant T' });
    const boss = await signIn('boss-s');
    const foreignSession = await signIn('foreigner');
    for (const id of [foreign.id, 999999]) {
      const res = await boss.post(`/api/UserRegistry/RevokeTokens/${id}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect((await boss.post(`/api/UserRegistry/RevokeTokens/abc`)).status).toBe(400);
    expect((await foreignSession.get('/api/Authentication/Session')).status).toBe(200);
    expect(await t.db.query(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`, [foreign.id])).toEqual([]);
    const plain = await signIn('nobody-s');
    expect((await plain.post(`/api/UserRegistry/RevokeTokens/${foreign.id}`)).status).toBe(403);
    expect((await requestWithoutCookies(`${t.url}/api/UserRegistry/RevokeTokens/${foreign.id}`, 'POST')).status).toBe(401);
  });

  it('the landlord administrator reaches every tenant', async () => {
    const { browser: admin } = await signInAdministrator(t);
    const target = await insertUser(t, { name: 'tenant-user', password: STRONG, tenantName: 'Tenant U' });
    const session = await signIn('tenant-user');
    t.clock.advance(1000);
    expect((await admin.post(`/api/UserRegistry/RevokeTokens/${target.id}`)).status).toBe(204);
    expect((await session.get('/api/Authentication/Session')).status).toBe(401);
    const [row] = await t.db.query(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`, [target.id]);
    expect(row).toMatchObject({ ReasonId: LogoutReasonId.AdministratorRevoked, CutByUser: 'Administrator' });
  });
});
