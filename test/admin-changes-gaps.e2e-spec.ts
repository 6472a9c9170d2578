import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies, createKey } from './helpers/api-keys';
import { Browser } from './helpers/http';
import { signInAdministrator, signInTenantAdministrator } from './helpers/users';
import { ActionTypeId, CredentialTypeId } from '../src/admin-changes/admin-change.types';
import { Permission } from '../src/access/permissions';
import { adminChangesAfter, lastAdminChangeId } from './helpers/admin-changes';

const STRONG = 'Tenant-Adm1n-Password!';
const USER_PASSWORD = 'Gaps-User-Passw0rd!';


/**
 * The chain a serialised history must form: each change's before is the previous one's after, the
 * first's before is where it started, the last's after is where it ended.
 */
function expectChain(changes: Array<Record<string, [unknown, unknown]>>, field: string, start: unknown, end: unknown): void {
  let expected = start;
  for (const change of changes) {
    expect(change[field][0]).toEqual(expected);
    expected = change[field][1];
  }
  expect(expected).toEqual(end);
}

/**
 * Issue 29's review gaps in contract 18, through the real HTTP API on PostgreSQL: TokensRevoked
 * records the TokensValidFrom it replaced; a TRUNCATE of a registry table is recorded (as the DELETE
 * of every row it removed); a refused adoption of rows outside the log is a Failed row; and
 * concurrent changes of one user or one role each record the true before value (read under the row
 * lock, in the change's transaction).
 */
describe('administrative changes: the review gaps of issue 29 (contract 18)', () => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let landlord: Browser;
  let bearer: Record<string, string>;
  let tenantId: number;

  beforeAll(async () => {
    t = await startTestApp();
    let token: string;
    ({ browser: landlord, token } = await signInAdministrator(t));
    bearer = { authorization: `Bearer ${token}` };
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Gaps Bank' });
    expect(tenant.status).toBe(201);
    tenantId = tenant.json.id;
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it('records the TokensValidFrom a revocation replaced as the before value', async () => {
    const role = await landlord.post('/api/RoleRegistry', { name: 'Revoked', tenantRegistryId: tenantId, permissions: [], active: true });
    const user = await landlord.post('/api/UserRegistry', { name: 'revoked-user', roleRegistryId: role.json.id, active: true, password: USER_PASSWORD });
    expect(user.status).toBe(201);
    const from = await lastAdminChangeId(t);
    expect((await landlord.post(`/api/UserRegistry/RevokeTokens/${user.json.id}`)).status).toBe(204);
    const [{ first }] = await t.db.query<{ first: Date }>(`SELECT "TokensValidFrom" AS first FROM "UserRegistry" WHERE "Id" = $1`, [user.json.id]);
    t.clock.set(t.clock.nowMs() + 5_000);
    expect((await landlord.post(`/api/UserRegistry/RevokeTokens/${user.json.id}`)).status).toBe(204);
    const [{ second }] = await t.db.query<{ second: Date }>(`SELECT "TokensValidFrom" AS second FROM "UserRegistry" WHERE "Id" = $1`, [user.json.id]);
    expect(second.getTime()).toBe(first.getTime() + 5_000);

    const added = (await adminChangesAfter(t, from)).filter((r) => r.ActionTypeId === 12);
    expect(added.map((r) => [r.TargetTable, r.TargetId, r.TargetName, r.Failed, r.Changes])).toEqual([
      ['UserRegistry', String(user.json.id), 'revoked-user', false, `{"tokensValidFrom":[null,"${first.toISOString()}"]}`],
      ['UserRegistry', String(user.json.id), 'revoked-user', false, `{"tokensValidFrom":["${first.toISOString()}","${second.toISOString()}"]}`],
    ]);
    // The read shows the same pair.
    const read = await landlord.get(`/api/AdminChange?targetTable=UserRegistry&targetId=${user.json.id}&actionTypeId=12&take=10`);
    expect(read.status).toBe(200);
    expect(read.json.rows.map((r: any) => r.changes)).toEqual([
      { tokensValidFrom: [first.toISOString(), second.toISOString()] },
      { tokensValidFrom: [null, first.toISOString()] },
    ]);
  });

  it('records a refused adoption of rows outside the log (403) as a failed RowsAdopted row, and adopts nothing', async () => {
    const tenantAdmin = await signInTenantAdministrator(t, 'gaps-tenant-admin', STRONG);
    const [actor] = await t.db.query<{ Id: number; TenantId: number }>(
      `SELECT u."Id", r."TenantRegistryId" AS "TenantId" FROM "UserRegistry" u JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId" WHERE u."Name" = 'gaps-tenant-admin'`,
    );
    const from = await lastAdminChangeId(t);
    expect((await tenantAdmin.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['1'] })).status).toBe(403);
    // A body naming no sealed table is refused the same way (the guard answers first) and still recorded.
    expect((await tenantAdmin.post('/api/Audit/Outside/Adopt', { table: 'UserRegistry', rowIds: 'x' })).status).toBe(403);
    expect((await tenantAdmin.post('/api/Audit/Outside/Adopt', {})).status).toBe(403);
    const added = await adminChangesAfter(t, from);
    expect(added.map((r) => [r.ActionTypeId, r.TargetTable, r.TargetId, r.TargetName, r.Failed, r.Changes, r.CreatedUser, r.UserRegistryId, r.CredentialTypeId])).toEqual([
      [14, 'UserLogin', null, null, true, '{}', 'gaps-tenant-admin', actor.Id, 3],
      [14, 'AdminChange', null, null, true, '{}', 'gaps-tenant-admin', actor.Id, 3],
      [14, 'AdminChange', null, null, true, '{}', 'gaps-tenant-admin', actor.Id, 3],
    ]);
    // Its own tenant's refusal: the tenant administrator reads it.
    t.clock.set(Math.max(Date.now(), t.clock.nowMs()) + 1000);
    const read = await tenantAdmin.get('/api/AdminChange?actionTypeId=14&failed=true&take=10');
    expect(read.status).toBe(200);
    expect(read.json.rows.length).toBe(3);
    expect(read.json.rows.every((r: any) => r.actionType === 'RowsAdopted' && r.failed === true)).toBe(true);
    expect(added.every((r) => r.TargetTenantRegistryId === null || r.TargetTenantRegistryId === actor.TenantId)).toBe(true);
    // Nothing was adopted: no RowsAdopted row that succeeded.
    expect(added.some((r) => !r.Failed)).toBe(false);
  });

  it('records the true before value of each of a burst of concurrent changes of one user and of one role', async () => {
    const roles: number[] = [];
    for (let i = 0; i < 4; i++) {
      const role = await landlord.post('/api/RoleRegistry', { name: `Burst ${i}`, tenantRegistryId: tenantId, permissions: [35], active: true });
      expect(role.status).toBe(201);
      roles.push(role.json.id);
    }
    const user = await landlord.post('/api/UserRegistry', { name: 'burst-user', roleRegistryId: roles[0], active: true, password: USER_PASSWORD });
    expect(user.status).toBe(201);
    const from = await lastAdminChangeId(t);

    // Twelve role changes of one user and twelve renames of one role, all at once, over a bearer token.
    const userPuts = Array.from({ length: 12 }, (_, i) =>
      requestWithoutCookies(`${t.url}/api/UserRegistry/${user.json.id}`, 'PUT', bearer, { roleRegistryId: roles[(i % 3) + 1], email: `burst${i}@example.com` }),
    );
    const rolePuts = Array.from({ length: 12 }, (_, i) => requestWithoutCookies(`${t.url}/api/RoleRegistry/${roles[0]}`, 'PUT', bearer, { name: `Burst renamed ${i}`, permissions: i % 2 ? [Permission.ReadWriteSecurityUser] : [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] }));
    const answers = await Promise.all([...userPuts, ...rolePuts]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));

    const added = await adminChangesAfter(t, from);
    const userChanges = added.filter((r) => r.ActionTypeId === 6 && r.TargetId === String(user.json.id)).map((r) => JSON.parse(r.Changes));
    const roleChanges = added.filter((r) => r.ActionTypeId === 4 && r.TargetId === String(roles[0])).map((r) => JSON.parse(r.Changes));
    // Every email differs, so every user change is a row; every rename too.
    expect(userChanges).toHaveLength(12);
    expect(roleChanges).toHaveLength(12);
    const [now] = await t.db.query<{ RoleRegistryId: number; Email: string }>(`SELECT "RoleRegistryId", "Email" FROM "UserRegistry" WHERE "Id" = $1`, [user.json.id]);
    expectChain(userChanges, 'email', null, now.Email);
    // The role did not change in every request (a request may ask for the role the user has by then); where it did, the chain holds.
    const roleSteps = userChanges.filter((c) => c.roleRegistryId);
    expectChain(roleSteps, 'roleRegistryId', roles[0], now.RoleRegistryId);
    const [role] = await t.db.query<{ Name: string }>(`SELECT "Name" FROM "RoleRegistry" WHERE "Id" = $1`, [roles[0]]);
    expectChain(roleChanges, 'name', 'Burst 0', role.Name);
    const permissionSteps = roleChanges.filter((c) => c.permissions);
    const [{ permissions }] = await t.db.query<{ permissions: number[] }>(
      `SELECT array_agg("PermissionSpecificationId" ORDER BY "PermissionSpecificationId") AS permissions FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1`,
      [roles[0]],
    );
    expectChain(permissionSteps, 'permissions', [35], permissions);
  });

  it('records a TRUNCATE of a registry table made in the database as the deletion of every row it removed', async () => {
    const [admin] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    const keyA = await createKey(t, landlord, admin.Id, { name: 'truncated-a' });
    const keyB = await createKey(t, landlord, admin.Id, { name: 'truncated-b' });
    const [{ keys }] = await t.db.query<{ keys: number }>(`SELECT count(*)::int AS keys FROM "UserRegistryApiKey"`);
    const from = await lastAdminChangeId(t);

    // As the database superuser, outside the service: the API keys first.
    await t.db.query(`TRUNCATE "UserRegistryApiKey"`);
    const apiKeyRows = await adminChangesAfter(t, from);
    expect(apiKeyRows).toHaveLength(keys);
    for (const row of apiKeyRows) {
      expect(row).toMatchObject({ CredentialTypeId: CredentialTypeId.Database, CreatedUser: 'postgres', UserRegistryId: null, CredentialId: null, ActionTypeId: ActionTypeId.ApiKeyRevoked, TargetTable: 'UserRegistryApiKey', Failed: false });
      const changes = JSON.parse(row.Changes);
      expect(Object.keys(changes)).toEqual(Object.keys(changes).sort());
      for (const [before, after] of Object.values(changes) as [unknown, unknown][]) expect(after).toBeNull();
      expect(changes.ApiKey).toEqual(['(secret)', null]);
    }
    expect(apiKeyRows.map((r) => r.TargetName).sort()).toEqual(expect.arrayContaining(['truncated-a', 'truncated-b']));
    expect(apiKeyRows.find((r) => r.TargetName === 'truncated-a')).toMatchObject({ TargetId: String(keyA.id) });
    const everything = JSON.stringify(apiKeyRows);
    for (const secret of [keyA.apiKey, keyB.apiKey, keyA.apiKey.slice(8), keyB.apiKey.slice(8)]) expect(everything).not.toContain(secret);

    // Without CASCADE the foreign keys refuse it, and the refused TRUNCATE leaves no row behind.
    const beforeRefused = await lastAdminChangeId(t);
    await expect(t.db.query(`TRUNCATE "UserRegistry"`)).rejects.toThrow(/foreign key/);
    expect(await adminChangesAfter(t, beforeRefused)).toEqual([]);

    // What a superuser can do: TRUNCATE ... CASCADE from the top. Every tenant, role, permission and user
    // it removes is one row, as a DELETE of each would have written.
    const [counts] = await t.db.query<{ tenants: number; roles: number; permissions: number; users: number }>(
      `SELECT (SELECT count(*) FROM "TenantRegistry")::int AS tenants, (SELECT count(*) FROM "RoleRegistry")::int AS roles,
              (SELECT count(*) FROM "RoleRegistryPermission")::int AS permissions, (SELECT count(*) FROM "UserRegistry")::int AS users`,
    );
    const [gapsUser] = await t.db.query<{ Id: number; RoleRegistryId: number }>(`SELECT "Id", "RoleRegistryId" FROM "UserRegistry" WHERE "Name" = 'burst-user'`);
    const beforeCascade = await lastAdminChangeId(t);
    await t.db.query(`TRUNCATE "TenantRegistry" CASCADE`);
    const cascaded = await adminChangesAfter(t, beforeCascade);
    const count = (action: number, table: string) => cascaded.filter((r) => r.ActionTypeId === action && r.TargetTable === table).length;
    expect(count(2, 'TenantRegistry')).toBe(counts.tenants);
    expect(count(7, 'UserRegistry')).toBe(counts.users);
    expect(count(4, 'RoleRegistry')).toBe(counts.roles + counts.permissions);
    expect(cascaded).toHaveLength(counts.tenants + counts.roles + counts.permissions + counts.users);
    expect(cascaded.every((r) => r.CredentialTypeId === 4 && r.CreatedUser === 'postgres' && !r.Failed)).toBe(true);
    const deletedUser = cascaded.find((r) => r.TargetTable === 'UserRegistry' && r.TargetId === String(gapsUser.Id))!;
    expect(deletedUser).toMatchObject({ ActionTypeId: ActionTypeId.UserDeleted, TargetName: 'burst-user', TargetTenantRegistryId: tenantId });
    const userChanges = JSON.parse(deletedUser.Changes);
    expect(userChanges.Password).toEqual(['(secret)', null]);
    expect(userChanges.RoleRegistryId).toEqual([gapsUser.RoleRegistryId, null]);
    expect(cascaded.find((r) => r.TargetTable === 'TenantRegistry' && r.TargetId === String(tenantId))).toMatchObject({ TargetName: 'Gaps Bank', TargetTenantRegistryId: tenantId });
    expect(await t.db.query(`SELECT 1 FROM "TenantRegistry"`)).toEqual([]);
  });
});
