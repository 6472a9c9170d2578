import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies, createKey } from './helpers/api-keys';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { insertUser, signInAdministrator, signInTenantAdministrator } from './helpers/users';
import { ActionTypeId, CredentialTypeId } from '../src/admin-changes/admin-change.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Tenant-Adm1n-Password!';
const RESET = 'Reset-Passw0rd-Value!';
const OWN = 'Own-New-Passw0rd-Value!';
const WIRE = 'ab'.repeat(32);

/** Every AdminChange row, oldest first, as stored. */
async function rows(t: TestApp): Promise<Record<string, any>[]> {
  return t.db.query(`SELECT a.*, a."Id"::text AS "Id", a."TargetId"::text AS "TargetId" FROM "AdminChange" a ORDER BY a."Id"`);
}

/**
 * Contract 18 through the real HTTP API on PostgreSQL: one AdminChange row per change of every write
 * route, in the change's transaction; refused writes (403, cross-tenant 404) as Failed rows; a 400
 * writes nothing; changes made in the database recorded by the registry triggers (CredentialTypeId 4),
 * the service's own sign-in bookkeeping never; secrets never in a row, a log line or the read; the
 * rows sealed into the log like UserLogin's.
 */
describe('administrative changes (contract 18)', () => {
  let t: TestApp;
  let logs: CapturedLogs;
  let landlord: Browser;
  let token: string;

  beforeAll(async () => {
    logs = new CapturedLogs();
    t = await startTestApp({ logger: logs });
    ({ browser: landlord, token } = await signInAdministrator(t));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes no row for the first sign-in bookkeeping but one PasswordChanged for its forced change, credited to the session that sign-in opened', async () => {
    const all = await rows(t);
    expect(all.filter((r) => r.CredentialTypeId === CredentialTypeId.Database)).toEqual([]);
    const changed = all.filter((r) => r.ActionTypeId === ActionTypeId.PasswordChanged);
    expect(changed).toHaveLength(1);
    // The first sign-in changed the expired password and answered this token: its sid names the session the change is credited to.
    const sid = (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8')) as { sid: string }).sid;
    expect(changed[0]).toMatchObject({
      CreatedUser: 'Administrator',
      CredentialTypeId: CredentialTypeId.Cookie,
      CredentialId: sid,
      TargetTable: 'UserRegistry',
      TargetName: 'Administrator',
      Failed: false,
      Changes: '{"password":["(secret)","(secret)"]}',
    });
    const [session] = await t.db.query<{ UserRegistryId: number }>(`SELECT "UserRegistryId" FROM "UserSession" WHERE "Id" = $1`, [sid]);
    expect(session.UserRegistryId).toBe(changed[0].UserRegistryId);
  });

  it('records tenants, roles and users created and changed, by the landlord over cookie, bearer and API key', async () => {
    const before = (await rows(t)).length;
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Acme' });
    expect(tenant.status).toBe(201);
    const role = await landlord.post('/api/RoleRegistry', { name: 'Ops', tenantRegistryId: tenant.json.id, permissions: [Permission.ReadWriteSecurityUser], active: true });
    expect(role.status).toBe(201);
    const bearer = { authorization: `Bearer ${token}` };
    const user = await requestWithoutCookies(`${t.url}/api/UserRegistry`, 'POST', bearer, { name: 'alice', roleRegistryId: role.json.id, active: true, password: STRONG });
    expect(user.status).toBe(201);
    const renamed = await landlord.put(`/api/TenantRegistry/${tenant.json.id}`, { name: 'Acme Bank' });
    expect(renamed.status).toBe(200);
    const regranted = await landlord.put(`/api/RoleRegistry/${role.json.id}`, { permissions: [Permission.ReadWriteSecurityUser, Permission.ReadWriteSecurityRole] });
    expect(regranted.status).toBe(200);
    const moved = await landlord.put(`/api/UserRegistry/${user.json.id}`, { email: 'alice@example.com', passwordLocked: true });
    expect(moved.status).toBe(200);
    // A PUT that changes nothing records nothing.
    expect((await landlord.put(`/api/UserRegistry/${user.json.id}`, { email: 'alice@example.com' })).status).toBe(200);

    const added = (await rows(t)).slice(before);
    expect(added.map((r) => [r.ActionTypeId, r.TargetTable, r.TargetName, r.CredentialTypeId])).toEqual([
      [1, 'TenantRegistry', 'Acme', 3],
      [3, 'RoleRegistry', 'Ops', 3],
      [5, 'UserRegistry', 'alice', 2],
      [2, 'TenantRegistry', 'Acme Bank', 3],
      [4, 'RoleRegistry', 'Ops', 3],
      [6, 'UserRegistry', 'alice', 3],
    ]);
    expect(added[0].Changes).toBe('{"active":[null,true],"landlord":[null,false],"name":[null,"Acme"]}');
    expect(added[0].TargetTenantRegistryId).toBe(tenant.json.id);
    expect(added[1].Changes).toBe(`{"active":[null,true],"name":[null,"Ops"],"permissions":[null,[35]],"tenantRegistryId":[null,${tenant.json.id}]}`);
    expect(added[2].Changes).toBe(
      `{"active":[null,true],"mustChangePassword":[null,false],"name":[null,"alice"],"password":[null,"(secret)"],"roleRegistryId":[null,${role.json.id}],"wirePasswordHash":[null,false]}`,
    );
    expect(added[3].Changes).toBe('{"name":["Acme","Acme Bank"]}');
    expect(added[4].Changes).toBe('{"permissions":[[35],[34,35]]}');
    expect(added[5].Changes).toBe('{"email":[null,"alice@example.com"],"passwordLocked":[false,true]}');
    const [admin] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    for (const row of added) {
      expect(row).toMatchObject({ CreatedUser: 'Administrator', UserRegistryId: admin.Id, Failed: false, RemoteIp: '127.0.0.1' });
      expect(row.CredentialId).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.TargetTenantRegistryId).toBe(row.TargetTable === 'TenantRegistry' ? tenant.json.id : tenant.json.id);
    }

    // An API key: created and used for a change, revoked; the key value never stored or shown.
    const key = await createKey(t, landlord, admin.Id, { name: 'automation' });
    const viaKey = await requestWithoutCookies(`${t.url}/api/UserRegistry/${user.json.id}/Password`, 'POST', { 'x-api-key': key.apiKey }, { password: RESET, wirePasswordHash: false });
    expect(viaKey.status).toBe(204);
    expect((await landlord.delete(`/api/UserRegistry/${admin.Id}/ApiKey/${key.id}`)).status).toBe(204);
    // Revoking again changes nothing: no second row.
    expect((await landlord.delete(`/api/UserRegistry/${admin.Id}/ApiKey/${key.id}`)).status).toBe(204);
    const keyRows = (await rows(t)).slice(before + 6);
    expect(keyRows.map((r) => [r.ActionTypeId, r.TargetTable, r.CredentialTypeId, r.CredentialId])).toEqual([
      [10, 'UserRegistryApiKey', 3, expect.any(String)],
      [8, 'UserRegistry', 1, key.apiKeyDisplay],
      [11, 'UserRegistryApiKey', 3, expect.any(String)],
    ]);
    expect(keyRows[0].Changes).toBe(`{"apiKeyDisplay":[null,"${key.apiKeyDisplay}"],"name":[null,"automation"],"userRegistryId":[null,${admin.Id}]}`);
    expect(keyRows[1].Changes).toBe('{"password":["(secret)","(secret)"]}');
    expect(keyRows[2].Changes).toBe(`{"apiKeyDisplay":["${key.apiKeyDisplay}",null],"name":["automation",null],"userRegistryId":[${admin.Id},null]}`);

    // No secret anywhere: not in a row, not in a log line, not in the read.
    const everything = JSON.stringify(await t.db.query(`SELECT * FROM "AdminChange"`));
    const read = await landlord.get('/api/AdminChange?take=1000');
    const csv = await landlord.get('/api/AdminChange?take=1000&format=csv');
    const logged = logs.lines.map((l) => l.message).join('\n');
    for (const secret of [STRONG, RESET, key.apiKey, key.apiKey.slice(8)]) {
      for (const text of [everything, read.text, csv.text, logged]) expect(text).not.toContain(secret);
    }
    const [{ Password: hash }] = await t.db.query<{ Password: string }>(`SELECT "Password" FROM "UserRegistry" WHERE "Name" = 'alice'`);
    for (const text of [everything, read.text, csv.text, logged]) expect(text).not.toContain(hash);
  });

  it('takes the registry change down with it when its AdminChange row cannot be written (one transaction)', async () => {
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Rollback Bank' });
    expect(tenant.status).toBe(201);
    const role = await landlord.post('/api/RoleRegistry', { name: 'Rollback role', tenantRegistryId: tenant.json.id, permissions: [], active: true });
    const user = await landlord.post('/api/UserRegistry', { name: 'rollback-user', roleRegistryId: role.json.id, active: true, password: STRONG, email: 'kept@example.com' });
    expect(user.status).toBe(201);
    await t.db.query(`CREATE FUNCTION admin_change_refused() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
    await t.db.query(`CREATE TRIGGER admin_change_refused BEFORE INSERT ON "AdminChange" FOR EACH ROW WHEN (NEW."TargetTable" IN ('TenantRegistry', 'RoleRegistry', 'UserRegistry')) EXECUTE FUNCTION admin_change_refused()`);
    try {
      expect((await landlord.put(`/api/TenantRegistry/${tenant.json.id}`, { name: 'Renamed Bank' })).status).toBeGreaterThanOrEqual(500);
      expect((await landlord.put(`/api/UserRegistry/${user.json.id}`, { email: 'lost@example.com', passwordLocked: true })).status).toBeGreaterThanOrEqual(500);
      expect((await landlord.post('/api/TenantRegistry', { name: 'Unrecorded Bank' })).status).toBeGreaterThanOrEqual(500);
      expect((await landlord.post('/api/RoleRegistry', { name: 'Unrecorded role', tenantRegistryId: tenant.json.id, permissions: [Permission.ReadWriteSecurityUser], active: true })).status).toBeGreaterThanOrEqual(500);
    } finally {
      await t.db.query(`DROP TRIGGER admin_change_refused ON "AdminChange"`);
      await t.db.query(`DROP FUNCTION admin_change_refused()`);
    }
    expect(await t.db.query(`SELECT "Name" FROM "TenantRegistry" WHERE "Id" = $1`, [tenant.json.id])).toEqual([{ Name: 'Rollback Bank' }]);
    expect(await t.db.query(`SELECT "Email", "PasswordLocked", "PasswordLockedDate" FROM "UserRegistry" WHERE "Id" = $1`, [user.json.id])).toEqual([
      { Email: 'kept@example.com', PasswordLocked: false, PasswordLockedDate: null },
    ]);
    expect(await t.db.query(`SELECT "Name" FROM "TenantRegistry" WHERE "Name" = 'Unrecorded Bank' UNION ALL SELECT "Name" FROM "RoleRegistry" WHERE "Name" = 'Unrecorded role'`)).toEqual([]);
  });

  it('records refused writes (403, cross-tenant 404) as failed rows, and a 400 not at all', async () => {
    const tenantAdmin = await signInTenantAdministrator(t, 'tenant-admin', STRONG);
    const other = await insertUser(t, { name: 'bob', tenantName: 'Other', permissions: [] });
    const before = (await rows(t)).length;
    expect((await tenantAdmin.put('/api/TenantRegistry/1', { name: 'Mine' })).status).toBe(403);
    expect((await tenantAdmin.put(`/api/UserRegistry/${other.id}`, { active: false })).status).toBe(404);
    expect((await tenantAdmin.post(`/api/UserRegistry/${other.id}/Password`, { password: RESET })).status).toBe(404);
    expect((await tenantAdmin.post('/api/RoleRegistry', { name: 'x'.repeat(300), permissions: [] })).status).toBe(400);
    const added = (await rows(t)).slice(before);
    expect(added.map((r) => [r.ActionTypeId, r.TargetTable, r.TargetId, r.TargetName, r.Failed, r.Changes, r.CreatedUser])).toEqual([
      [2, 'TenantRegistry', '1', null, true, '{}', 'tenant-admin'],
      [6, 'UserRegistry', String(other.id), null, true, '{}', 'tenant-admin'],
      [8, 'UserRegistry', String(other.id), null, true, '{}', 'tenant-admin'],
    ]);
    // The tenant administrator reads its own tenant's rows only: its refusals, not the landlord's changes of Acme.
    // The database dates its own rows by its clock (real time), the service by the injected one: bring them together.
    t.clock.set(Date.now() + 1000);
    const read = await tenantAdmin.get('/api/AdminChange?take=1000');
    expect(read.status).toBe(200);
    // Its own refusals, newest first, and the database's changes of its tenant (insertUser's); nothing of Acme's.
    expect(read.json.rows.filter((r: any) => r.failed).map((r: any) => r.actionType)).toEqual(['PasswordSetByAdministrator', 'UserChanged', 'TenantChanged']);
    expect(read.json.rows.filter((r: any) => !r.failed).map((r: any) => r.credentialType)).toEqual(expect.arrayContaining(['Database']));
    expect(read.json.rows.some((r: any) => r.targetName === 'Acme Bank' || r.targetName === 'alice')).toBe(false);
    const refused = read.json.rows.find((r: any) => r.failed);
    expect(refused).toMatchObject({ credentialType: 'Cookie session', targetName: null, targetTable: 'UserRegistry', targetId: other.id });
    expect(refused.changes).toEqual({});
  });

  it('records changes made in the database (CredentialTypeId 4, the database role) and never the sign-in bookkeeping', async () => {
    const alice = (await t.db.query<{ Id: number; RoleRegistryId: number }>(`SELECT "Id", "RoleRegistryId" FROM "UserRegistry" WHERE "Name" = 'alice'`))[0];
    // Sign-ins, a failed one, a lock cleared by the service, a logout: none is a database change.
    await t.db.query(`UPDATE "UserRegistry" SET "PasswordLocked" = false, "FailedPasswordCount" = 0 WHERE "Id" = $1`, [alice.Id]);
    const before = (await rows(t)).length;
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'alice', password: 'wrong-password' })).status).toBe(401);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'alice', password: RESET, newPassword: OWN, repeatNewPassword: OWN })).status).toBe(200);
    expect((await browser.post('/api/Authentication/Logout')).status).toBeLessThan(300);
    const afterSignIn = (await rows(t)).slice(before);
    expect(afterSignIn.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.CreatedUser])).toEqual([[9, 3, 'alice']]);

    await t.db.query(`UPDATE "UserRegistry" SET "RoleRegistryId" = (SELECT "Id" FROM "RoleRegistry" WHERE "Name" = 'Administrator'), "Password" = $2 WHERE "Id" = $1`, [alice.Id, WIRE]);
    await t.db.query(`DELETE FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1 AND "PermissionSpecificationId" = 34`, [alice.RoleRegistryId]);
    const added = (await rows(t)).slice(before + 1);
    expect(added.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.CreatedUser, r.UserRegistryId, r.CredentialId, r.TargetTable])).toEqual([
      [8, 4, 'postgres', null, null, 'UserRegistry'],
      [4, 4, 'postgres', null, null, 'RoleRegistry'],
    ]);
    const changes = JSON.parse(added[0].Changes);
    expect(Object.keys(changes)).toEqual(['Password', 'RoleRegistryId']);
    expect(changes.Password).toEqual(['(secret)', '(secret)']);
    expect(added[0].Changes).not.toContain(WIRE);
    expect(added[1]).toMatchObject({ TargetId: String(alice.RoleRegistryId), TargetName: 'Ops', Changes: `{"PermissionSpecificationId":[34,null],"RoleRegistryId":[${alice.RoleRegistryId},null]}` });
  });

  it('records revoked tokens and ended sessions, and seals every row into the log', async () => {
    const alice = (await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'alice'`))[0];
    // The database change above replaced alice's password: the landlord sets one again.
    expect((await landlord.post(`/api/UserRegistry/${alice.Id}/Password`, { password: OWN, mustChangePassword: false })).status).toBe(204);
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'alice', password: OWN })).status).toBe(200);
    const sessions = await landlord.get(`/api/UserRegistry/${alice.Id}/Sessions`);
    expect((await landlord.delete(`/api/UserRegistry/${alice.Id}/Sessions/${sessions.json[0].id}`)).status).toBe(204);
    expect((await landlord.post(`/api/UserRegistry/RevokeTokens/${alice.Id}`)).status).toBe(204);
    const last = (await rows(t)).slice(-2);
    expect(last.map((r) => [r.ActionTypeId, r.TargetTable, r.TargetId, r.TargetName])).toEqual([
      [13, 'UserSession', null, sessions.json[0].id],
      [12, 'UserRegistry', String(alice.Id), 'alice'],
    ]);

    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditPending"`);
      return n === 0;
    });
    const all = await rows(t);
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditLeaf" WHERE "TableName" = 'AdminChange'`);
    expect(n).toBe(all.length);
    const proof = await landlord.get(`/api/Audit/Proof?table=AdminChange&id=${last[1].Id}`);
    expect(proof.status).toBe(200);
    expect(JSON.parse(proof.json.canonical)[0]).toBe('AdminChange');
    // Append-only like UserLogin.
    await expect(t.db.query(`UPDATE "AdminChange" SET "Failed" = true`)).rejects.toThrow(/append-only/);
    await expect(t.db.query(`DELETE FROM "AdminChange"`)).rejects.toThrow(/append-only/);
  });

  it('filters, searches and exports the read', async () => {
    const failed = await landlord.get('/api/AdminChange?failed=true&take=100');
    expect(failed.json.rows.length).toBe(3);
    const target = await landlord.get('/api/AdminChange?targetTable=TenantRegistry&take=100');
    expect(new Set(target.json.rows.map((r: any) => r.targetTable))).toEqual(new Set(['TenantRegistry']));
    const acme = await landlord.get('/api/AdminChange?search=acme%20bank&take=100');
    expect(acme.json.rows.map((r: any) => r.actionType)).toEqual(['TenantChanged']);
    expect(acme.json.rows[0].changes).toEqual({ name: ['Acme', 'Acme Bank'] });
    expect((await landlord.get('/api/AdminChange?targetTable=Nope')).status).toBe(400);
    expect((await landlord.get('/api/AdminChange?actionTypeId=99')).status).toBe(400);
    const csv = await landlord.get('/api/AdminChange?format=csv&actionTypeId=2');
    expect(csv.text.split('\n')[0]).toContain('changes');
  });
});
