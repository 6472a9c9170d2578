import { createHash } from 'node:crypto';
import { Bus, CHANNELS } from '../src/bus/bus';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Tenant-Adm1n-Strong';
const OTHER_STRONG = 'An0ther-Strong-Pass';

describe('registry: tenants, roles, users (contract 6)', () => {
  let t: TestApp;
  let admin: Browser;
  let landlordTenantId: number;
  const changes: Array<{ entity: string; id: number; action: string; at: string }> = [];

  beforeAll(async () => {
    t = await startTestApp();
    t.app.get(Bus).subscribe(CHANNELS.serviceChange, (message) => changes.push(JSON.parse(message)));
    admin = (await signInAdministrator(t)).browser;
    landlordTenantId = (await admin.get('/api/Authentication/Session')).json.tenantRegistryId;
  });
  afterAll(async () => t.close());

  async function signIn(userName: string, password: string): Promise<Browser> {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName, password });
    if (res.status !== 200) throw new Error(`sign-in of ${userName} failed: ${res.status} ${res.text}`);
    return browser;
  }

  /** Waits for the in-process bus to deliver what was published during the request. */
  const delivered = () => new Promise((resolve) => setImmediate(resolve));

  /** A tenant, a role in it with `permissions`, a user in that role, signed in. */
  async function tenantAdministrator(prefix: string, permissions: number[]) {
    const tenant = await admin.post('/api/TenantRegistry', { name: `${prefix} Tenant`, active: true });
    expect(tenant.status).toBe(201);
    const role = await admin.post('/api/RoleRegistry', {
      name: `${prefix} Administrators`,
      tenantRegistryId: tenant.json.id,
      permissions,
      active: true,
    });
    expect(role.status).toBe(201);
    const user = await admin.post('/api/UserRegistry', {
      name: `${prefix}-admin`,
      roleRegistryId: role.json.id,
      active: true,
      password: STRONG,
    });
    expect(user.status).toBe(201);
    const browser = await signIn(`${prefix}-admin`, STRONG);
    return { tenant: tenant.json, role: role.json, user: user.json, browser };
  }

  describe('tenants (landlord only)', () => {
    it('creates, lists and updates tenants; a created tenant is never a landlord', async () => {
      const created = await admin.post('/api/TenantRegistry', { name: 'Acme Bank', active: true, landlord: true });
      expect(created.status).toBe(201);
      expect(created.json).toEqual({ id: expect.any(Number), name: 'Acme Bank', landlord: false, active: true });

      const list = await admin.get('/api/TenantRegistry');
      expect(list.status).toBe(200);
      expect(Array.isArray(list.json)).toBe(true);
      expect(list.json).toEqual(
        expect.arrayContaining([
          { id: landlordTenantId, name: 'Landlord', landlord: true, active: true },
          created.json,
        ]),
      );

      const updated = await admin.put(`/api/TenantRegistry/${created.json.id}`, { name: 'Acme Bank plc', active: false });
      expect(updated.status).toBe(200);
      expect(updated.json).toEqual({ id: created.json.id, name: 'Acme Bank plc', landlord: false, active: false });
      const [row] = await t.db.query<{ Name: string; Active: boolean; Landlord: boolean }>(
        `SELECT * FROM "TenantRegistry" WHERE "Id" = $1`,
        [created.json.id],
      );
      expect(row).toMatchObject({ Name: 'Acme Bank plc', Active: false, Landlord: false });
    });

    it('answers 409 for a duplicate name (case-insensitively) and 404 for an unknown tenant', async () => {
      await admin.post('/api/TenantRegistry', { name: 'Duplicate Bank', active: true });
      const duplicate = await admin.post('/api/TenantRegistry', { name: 'DUPLICATE bank', active: true });
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect((await admin.put('/api/TenantRegistry/999999', { name: 'Nobody', active: true })).status).toBe(404);
    });

    it('refuses to deactivate the landlord tenant, which would shut every administrator out', async () => {
      const res = await admin.put(`/api/TenantRegistry/${landlordTenantId}`, { name: 'Landlord', active: false });
      expect(res.status).toBe(409);
      expect((await admin.get('/api/Authentication/Session')).status).toBe(200);
    });
  });

  describe('roles and the permission catalogue', () => {
    it('creates, lists and updates roles with their permissions', async () => {
      const tenant = (await admin.post('/api/TenantRegistry', { name: 'Role Bank', active: true })).json;
      const created = await admin.post('/api/RoleRegistry', {
        name: 'Analysts',
        tenantRegistryId: tenant.id,
        permissions: [Permission.ReadWriteSecurityUser, Permission.ReadWriteSecurityUser],
        active: true,
      });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ id: expect.any(Number), name: 'Analysts', tenantRegistryId: tenant.id, active: true, permissions: [Permission.ReadWriteSecurityUser] });

      const own = await admin.post('/api/RoleRegistry', { name: 'Landlord Helpers', permissions: [], active: true });
      expect(own.status).toBe(201);
      expect(own.json.tenantRegistryId).toBe(landlordTenantId);

      const list = await admin.get('/api/RoleRegistry');
      expect(list.status).toBe(200);
      expect(list.json.map((r: { id: number }) => r.id)).toEqual(expect.arrayContaining([created.json.id, own.json.id]));

      const updated = await admin.put(`/api/RoleRegistry/${created.json.id}`, {
        name: 'Senior Analysts',
        tenantRegistryId: tenant.id,
        permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser],
        active: false,
      });
      expect(updated.status).toBe(200);
      expect(updated.json).toMatchObject({ id: created.json.id, name: 'Senior Analysts', active: false, permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
      const rows = await t.db.query<{ PermissionSpecificationId: number }>(
        `SELECT "PermissionSpecificationId" FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1 ORDER BY 1`,
        [created.json.id],
      );
      expect(rows.map((r) => r.PermissionSpecificationId)).toEqual([34, 35]);
    });

    it('answers 409 for a duplicate role name in one tenant, but allows it in another', async () => {
      const a = (await admin.post('/api/TenantRegistry', { name: 'Dup Role Bank A', active: true })).json;
      const b = (await admin.post('/api/TenantRegistry', { name: 'Dup Role Bank B', active: true })).json;
      expect((await admin.post('/api/RoleRegistry', { name: 'Tellers', tenantRegistryId: a.id, permissions: [], active: true })).status).toBe(201);
      expect((await admin.post('/api/RoleRegistry', { name: 'TELLERS', tenantRegistryId: a.id, permissions: [], active: true })).status).toBe(409);
      expect((await admin.post('/api/RoleRegistry', { name: 'Tellers', tenantRegistryId: b.id, permissions: [], active: true })).status).toBe(201);
    });

    it('refuses unknown permissions (400), an unknown tenant (404) and moving a role to another tenant (400)', async () => {
      const unknownPermission = await admin.post('/api/RoleRegistry', { name: 'Ghosts', permissions: [34, 9999], active: true });
      expect(unknownPermission.status).toBe(400);
      expect(unknownPermission.json.errors).toEqual([expect.objectContaining({ field: 'permissions' })]);
      expect((await admin.post('/api/RoleRegistry', { name: 'Ghosts', tenantRegistryId: 999999, permissions: [], active: true })).status).toBe(404);
      const role = (await admin.post('/api/RoleRegistry', { name: 'Stay Home', permissions: [], active: true })).json;
      const tenant = (await admin.post('/api/TenantRegistry', { name: 'Elsewhere Bank', active: true })).json;
      expect((await admin.put(`/api/RoleRegistry/${role.id}`, { name: 'Stay Home', tenantRegistryId: tenant.id, permissions: [], active: true })).status).toBe(400);
    });

    it('lists the permission specifications to any authenticated caller, and to nobody else', async () => {
      await insertUser(t, { name: 'plain-user', password: STRONG, tenantName: 'Plain Bank' });
      const plain = await signIn('plain-user', STRONG);
      const res = await plain.get('/api/PermissionSpecification');
      expect(res.status).toBe(200);
      expect(res.json).toEqual([
        { id: 34, name: 'Read Write Security Role' },
        { id: 35, name: 'Read Write Security User' },
      ]);
      expect((await new Browser(t.url).get('/api/PermissionSpecification')).status).toBe(401);
    });
  });

  describe('users', () => {
    let roleId: number;
    beforeAll(async () => {
      const tenant = (await admin.post('/api/TenantRegistry', { name: 'User Bank', active: true })).json;
      roleId = (await admin.post('/api/RoleRegistry', { name: 'Clerks', tenantRegistryId: tenant.id, permissions: [], active: true })).json.id;
    });

    it('creates, reads, lists, updates and deletes a user; never shows the password hash', async () => {
      const created = await admin.post('/api/UserRegistry', {
        name: 'carol',
        email: 'carol@example.com',
        roleRegistryId: roleId,
        active: true,
        password: STRONG,
      });
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({
        id: expect.any(Number),
        name: 'carol',
        email: 'carol@example.com',
        roleRegistryId: roleId,
        roleName: 'Clerks',
        tenantName: 'User Bank',
        active: true,
        passwordLocked: false,
        failedPasswordCount: 0,
        wirePasswordHash: false,
        lastLoginDate: null,
        createdUser: 'Administrator',
      });
      expect(created.json).not.toHaveProperty('password');
      expect(created.text).not.toMatch(/argon2/);
      const id = created.json.id;

      const got = await admin.get(`/api/UserRegistry/${id}`);
      expect(got.status).toBe(200);
      expect(got.json).toEqual(created.json);
      const list = await admin.get('/api/UserRegistry');
      expect(list.status).toBe(200);
      expect(list.json.find((u: { id: number }) => u.id === id)).toEqual(created.json);
      expect(list.text).not.toMatch(/argon2/);

      // Not forced to change: the password created by an administrator signs in at once.
      await signIn('carol', STRONG);

      const updated = await admin.put(`/api/UserRegistry/${id}`, { email: 'carol@bank.example' });
      expect(updated.status).toBe(200);
      expect(updated.json).toMatchObject({ id, email: 'carol@bank.example', active: true, roleRegistryId: roleId });
      expect((await admin.put(`/api/UserRegistry/${id}`, { email: null })).json.email).toBeNull();

      const deleted = await admin.delete(`/api/UserRegistry/${id}`);
      expect(deleted.status).toBe(204);
      expect((await admin.get(`/api/UserRegistry/${id}`)).status).toBe(404);
      expect((await admin.get('/api/UserRegistry')).json.some((u: { id: number }) => u.id === id)).toBe(false);
      const [row] = await t.db.query<{ Deleted: boolean }>(`SELECT "Deleted" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
      expect(row.Deleted).toBe(true);
      // The name is free again once the user is deleted.
      expect((await admin.post('/api/UserRegistry', { name: 'Carol', roleRegistryId: roleId, active: true, password: STRONG })).status).toBe(201);
    });

    it('answers 409 for a duplicate user name, case-insensitively', async () => {
      expect((await admin.post('/api/UserRegistry', { name: 'dave', roleRegistryId: roleId, active: true, password: STRONG })).status).toBe(201);
      const duplicate = await admin.post('/api/UserRegistry', { name: 'DAVE', roleRegistryId: roleId, active: true, password: STRONG });
      expect(duplicate.status).toBe(409);
      expect(duplicate.headers.get('content-type')).toMatch(/application\/problem\+json/);
    });

    it('refuses an e-mail over 256 characters (400), never truncating it', async () => {
      const email = `${'e'.repeat(250)}@example.com`;
      const res = await admin.post('/api/UserRegistry', { name: 'erin', email, roleRegistryId: roleId, active: true, password: STRONG });
      expect(res.status).toBe(400);
      expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'email' })]));
      expect(await t.db.query(`SELECT 1 FROM "UserRegistry" WHERE "Name" = 'erin'`)).toEqual([]);
      const user = (await admin.post('/api/UserRegistry', { name: 'erin', roleRegistryId: roleId, active: true, password: STRONG })).json;
      expect((await admin.put(`/api/UserRegistry/${user.id}`, { email })).status).toBe(400);
      expect((await admin.get(`/api/UserRegistry/${user.id}`)).json.email).toBeNull();
    });

    it('refuses a weak password listing every rule broken, and an unknown role with 404', async () => {
      const weak = await admin.post('/api/UserRegistry', { name: 'frank', roleRegistryId: roleId, active: true, password: 'short' });
      expect(weak.status).toBe(400);
      expect(weak.json.errors.length).toBeGreaterThanOrEqual(3);
      expect(weak.json.errors.every((e: { field: string }) => e.field === 'password')).toBe(true);
      expect((await admin.post('/api/UserRegistry', { name: 'frank', roleRegistryId: 999999, active: true, password: STRONG })).status).toBe(404);
    });

    it('unlocks a locked user: PUT passwordLocked false resets the failure count', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'gina', roleRegistryId: roleId, active: true, password: STRONG })).json;
      const browser = new Browser(t.url);
      for (let i = 0; i < 4; i++) {
        expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'gina', password: 'Wrong-Passw0rd!' })).status).toBe(401);
      }
      const locked = (await admin.get(`/api/UserRegistry/${user.id}`)).json;
      expect(locked).toMatchObject({ passwordLocked: true, failedPasswordCount: 4 });
      expect(locked.passwordLockedDate).not.toBeNull();
      expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'gina', password: STRONG })).status).toBe(401);

      const unlocked = await admin.put(`/api/UserRegistry/${user.id}`, { passwordLocked: false });
      expect(unlocked.status).toBe(200);
      expect(unlocked.json).toMatchObject({ passwordLocked: false, failedPasswordCount: 0, passwordLockedDate: null });
      const [row] = await t.db.query<{ FailedPasswordCount: number; PasswordLocked: boolean }>(
        `SELECT "FailedPasswordCount", "PasswordLocked" FROM "UserRegistry" WHERE "Id" = $1`,
        [user.id],
      );
      expect(row).toEqual({ FailedPasswordCount: 0, PasswordLocked: false });
      await signIn('gina', STRONG);
    });

    it('a password reset ends the old session (ReasonId 3) and the new password works', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'hank', roleRegistryId: roleId, active: true, password: STRONG })).json;
      const old = await signIn('hank', STRONG);
      t.clock.advance(1000);
      const reset = await admin.post(`/api/UserRegistry/${user.id}/Password`, {
        password: OTHER_STRONG,
        wirePasswordHash: false,
        mustChangePassword: false,
      });
      expect(reset.status).toBe(204);
      expect(reset.text).toBe('');
      expect((await old.get('/api/Authentication/Session')).status).toBe(401);
      const logouts = await t.db.query<{ ReasonId: number; OutcomeId: number; CutByUser: string; CreatedUser: string }>(
        `SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`,
        [user.id],
      );
      expect(logouts).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.PasswordChanged, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'Administrator', CreatedUser: 'hank' })]);
      expect((await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'hank', password: STRONG })).status).toBe(401);
      await signIn('hank', OTHER_STRONG);
    });

    it('a reset forces a change at the next sign-in by default (403 PasswordChangeRequired)', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'iris', roleRegistryId: roleId, active: true, password: STRONG })).json;
      expect((await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: OTHER_STRONG, wirePasswordHash: false })).status).toBe(204);
      const res = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'iris', password: OTHER_STRONG });
      expect(res.status).toBe(403);
      expect(res.json.code).toBe('PasswordChangeRequired');
      const explicit = (await admin.post('/api/UserRegistry', { name: 'iris2', roleRegistryId: roleId, active: true, password: STRONG, mustChangePassword: true })).json;
      const created = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'iris2', password: STRONG });
      expect(explicit.passwordExpiryDate).not.toBeNull();
      expect(created.status).toBe(403);
      expect(created.json.code).toBe('PasswordChangeRequired');
    });

    it('a reset with wirePasswordHash stores the flag; the user signs in with sha256(password + userName)', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'Jack', roleRegistryId: roleId, active: true, password: STRONG })).json;
      const wire = createHash('sha256').update('any password at all' + 'Jack', 'utf8').digest('hex');
      const notHex = await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: 'not-a-hash', wirePasswordHash: true });
      expect(notHex.status).toBe(400);
      const reset = await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: wire, wirePasswordHash: true, mustChangePassword: false });
      expect(reset.status).toBe(204);
      expect((await admin.get(`/api/UserRegistry/${user.id}`)).json.wirePasswordHash).toBe(true);
      expect((await new Browser(t.url).post('/api/Authentication/WirePasswordHash', { userName: 'Jack' })).json).toEqual({ wirePasswordHash: true });
      await signIn('Jack', wire);
      expect((await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'Jack', password: 'any password at all' })).status).toBe(401);
      // Resetting again without the flag clears it.
      await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: STRONG, wirePasswordHash: false, mustChangePassword: false });
      expect((await admin.get(`/api/UserRegistry/${user.id}`)).json.wirePasswordHash).toBe(false);
      await signIn('Jack', STRONG);
    });

    it('deactivating a user ends its sessions (ReasonId 2, CutByUser) and refuses its sign-in', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'kate', roleRegistryId: roleId, active: true, password: STRONG })).json;
      const session = await signIn('kate', STRONG);
      t.clock.advance(1000);
      const res = await admin.put(`/api/UserRegistry/${user.id}`, { active: false });
      expect(res.status).toBe(200);
      expect(res.json.active).toBe(false);
      expect((await session.get('/api/Authentication/Session')).status).toBe(401);
      const logouts = await t.db.query<{ ReasonId: number; CutByUser: string; CreatedUser: string }>(
        `SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`,
        [user.id],
      );
      expect(logouts).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.AdministratorRevoked, CutByUser: 'Administrator', CreatedUser: 'kate' })]);
      expect((await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'kate', password: STRONG })).status).toBe(401);
      // Reactivating is not another revocation.
      expect((await admin.put(`/api/UserRegistry/${user.id}`, { active: true })).json.active).toBe(true);
      expect(await t.db.query(`SELECT 1 FROM "UserLogout" WHERE "UserRegistryId" = $1`, [user.id])).toHaveLength(1);
    });

    it('deleting a user ends its sessions (ReasonId 2)', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'liam', roleRegistryId: roleId, active: true, password: STRONG })).json;
      const session = await signIn('liam', STRONG);
      t.clock.advance(1000);
      expect((await admin.delete(`/api/UserRegistry/${user.id}`)).status).toBe(204);
      expect((await session.get('/api/Authentication/Session')).status).toBe(401);
      const logouts = await t.db.query<{ ReasonId: number; CutByUser: string }>(`SELECT * FROM "UserLogout" WHERE "UserRegistryId" = $1`, [user.id]);
      expect(logouts).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.AdministratorRevoked, CutByUser: 'Administrator' })]);
      expect((await admin.delete(`/api/UserRegistry/${user.id}`)).status).toBe(404);
    });

    it('answers 503 and changes nothing when the sessions cannot be ended', async () => {
      const user = (await admin.post('/api/UserRegistry', { name: 'mona', roleRegistryId: roleId, active: true, password: STRONG })).json;
      await t.db.query(`CREATE FUNCTION refuse_logout() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit store down'; END $$`);
      await t.db.query(`CREATE TRIGGER refuse_logout BEFORE INSERT ON "UserLogout" FOR EACH ROW EXECUTE FUNCTION refuse_logout()`);
      try {
        const deactivate = await admin.put(`/api/UserRegistry/${user.id}`, { active: false });
        expect(deactivate.status).toBe(503);
        expect(deactivate.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(deactivate.text).not.toMatch(/audit store down|UserLogout/);
        expect((await admin.delete(`/api/UserRegistry/${user.id}`)).status).toBe(503);
        const [row] = await t.db.query<{ Active: boolean; Deleted: boolean; TokensValidFrom: Date | null }>(
          `SELECT "Active", "Deleted", "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1`,
          [user.id],
        );
        expect(row).toEqual({ Active: true, Deleted: false, TokensValidFrom: null });
      } finally {
        await t.db.query(`DROP TRIGGER refuse_logout ON "UserLogout"`);
        await t.db.query(`DROP FUNCTION refuse_logout()`);
      }
    });

    it('refuses an administrator deactivating or deleting its own account', async () => {
      const me = (await admin.get('/api/Authentication/Session')).json.userRegistryId;
      expect((await admin.put(`/api/UserRegistry/${me}`, { active: false })).status).toBe(409);
      expect((await admin.delete(`/api/UserRegistry/${me}`)).status).toBe(409);
      expect((await admin.get('/api/Authentication/Session')).status).toBe(200);
    });
  });

  describe('tenant scope', () => {
    it('a tenant administrator sees and changes only its own tenant; the rest is absent (404)', async () => {
      const other = await tenantAdministrator('Other', [34, 35]);
      const mine = await tenantAdministrator('Mine', [34, 35]);
      const me = mine.browser;

      const users = await me.get('/api/UserRegistry');
      expect(users.status).toBe(200);
      expect(users.json.map((u: { name: string }) => u.name)).toEqual(['Mine-admin']);
      expect(users.json.every((u: { tenantRegistryId: number }) => u.tenantRegistryId === mine.tenant.id)).toBe(true);
      const roles = await me.get('/api/RoleRegistry');
      expect(roles.json.map((r: { id: number }) => r.id)).toEqual([mine.role.id]);

      // Another tenant's user and role, and the landlord's administrator, are absent.
      const adminId = (await admin.get('/api/Authentication/Session')).json.userRegistryId;
      for (const id of [other.user.id, adminId]) {
        expect((await me.get(`/api/UserRegistry/${id}`)).status).toBe(404);
        expect((await me.put(`/api/UserRegistry/${id}`, { active: false })).status).toBe(404);
        expect((await me.delete(`/api/UserRegistry/${id}`)).status).toBe(404);
        expect((await me.post(`/api/UserRegistry/${id}/Password`, { password: OTHER_STRONG, wirePasswordHash: false })).status).toBe(404);
      }
      expect((await me.put(`/api/RoleRegistry/${other.role.id}`, { name: 'Stolen', permissions: [], active: true })).status).toBe(404);
      // Another tenant's role can be neither given to a user nor used to create one.
      expect((await me.put(`/api/UserRegistry/${mine.user.id}`, { roleRegistryId: other.role.id })).status).toBe(404);
      expect((await me.post('/api/UserRegistry', { name: 'mole', roleRegistryId: other.role.id, active: true, password: STRONG })).status).toBe(404);
      // Nor can it create a role in another tenant.
      expect((await me.post('/api/RoleRegistry', { name: 'Planted', tenantRegistryId: other.tenant.id, permissions: [], active: true })).status).toBe(404);
      expect(await t.db.query(`SELECT 1 FROM "RoleRegistry" WHERE "Name" = 'Planted'`)).toEqual([]);
      expect((await t.db.query<{ Active: boolean }>(`SELECT "Active" FROM "UserRegistry" WHERE "Id" = $1`, [other.user.id]))[0].Active).toBe(true);

      // Within its tenant it works: a role defaulting to its own tenant, and a user in it.
      const role = await me.post('/api/RoleRegistry', { name: 'Tellers', permissions: [Permission.ReadWriteSecurityUser], active: true });
      expect(role.status).toBe(201);
      expect(role.json.tenantRegistryId).toBe(mine.tenant.id);
      const user = await me.post('/api/UserRegistry', { name: 'mine-teller', roleRegistryId: role.json.id, active: true, password: STRONG });
      expect(user.status).toBe(201);
      expect(user.json).toMatchObject({ tenantRegistryId: mine.tenant.id, createdUser: 'Mine-admin' });
      expect((await me.get(`/api/UserRegistry/${user.json.id}`)).status).toBe(200);

      // And tenants are for landlords only.
      expect((await me.get('/api/TenantRegistry')).status).toBe(403);
      expect((await me.post('/api/TenantRegistry', { name: 'Mine Too', active: true })).status).toBe(403);
      expect((await me.put(`/api/TenantRegistry/${mine.tenant.id}`, { name: 'Mine Renamed', active: true })).status).toBe(403);
    });

    it('a landlord sees every tenant\'s users and roles', async () => {
      const users = (await admin.get('/api/UserRegistry')).json;
      expect(new Set(users.map((u: { tenantRegistryId: number }) => u.tenantRegistryId)).size).toBeGreaterThan(1);
    });

    it('refuses 403 without the permission of the route', async () => {
      await insertUser(t, { name: 'no-perms', password: STRONG, tenantName: 'Plain Bank' });
      const plain = await signIn('no-perms', STRONG);
      expect((await plain.get('/api/UserRegistry')).status).toBe(403);
      expect((await plain.post('/api/UserRegistry', { name: 'x', roleRegistryId: 1, active: true, password: STRONG })).status).toBe(403);
      expect((await plain.get('/api/UserRegistry/1')).status).toBe(403);
      expect((await plain.get('/api/RoleRegistry')).status).toBe(403);
      expect((await plain.get('/api/TenantRegistry')).status).toBe(403);
      const anonymous = new Browser(t.url);
      for (const path of ['/api/UserRegistry', '/api/RoleRegistry', '/api/TenantRegistry', '/api/UserRegistry/1']) {
        expect((await anonymous.get(path)).status).toBe(401);
      }
    });
  });

  describe('privilege escalation', () => {
    it('a tenant administrator cannot grant, assign or take over permissions it does not hold (403)', async () => {
      const strong = await tenantAdministrator('Esc', [34, 35]);
      // A user administrator of the same tenant holding only 35.
      const userAdminRole = (await strong.browser.post('/api/RoleRegistry', { name: 'User Admins', permissions: [Permission.ReadWriteSecurityUser], active: true })).json;
      await strong.browser.post('/api/UserRegistry', { name: 'esc-useradmin', roleRegistryId: userAdminRole.id, active: true, password: STRONG });
      const weak = await signIn('esc-useradmin', STRONG);

      // Cannot create a user in the stronger role, nor move anyone (itself included) into it.
      expect((await weak.post('/api/UserRegistry', { name: 'esc-puppet', roleRegistryId: strong.role.id, active: true, password: STRONG })).status).toBe(403);
      const self = (await weak.get('/api/Authentication/Session')).json.userRegistryId;
      expect((await weak.put(`/api/UserRegistry/${self}`, { roleRegistryId: strong.role.id })).status).toBe(403);
      // Cannot take over the stronger administrator.
      expect((await weak.post(`/api/UserRegistry/${strong.user.id}/Password`, { password: OTHER_STRONG, wirePasswordHash: false })).status).toBe(403);
      expect((await weak.put(`/api/UserRegistry/${strong.user.id}`, { active: false })).status).toBe(403);
      expect((await weak.delete(`/api/UserRegistry/${strong.user.id}`)).status).toBe(403);
      expect(await t.db.query(`SELECT 1 FROM "UserRegistry" WHERE "Name" = 'esc-puppet'`)).toEqual([]);
      const [row] = await t.db.query<{ Active: boolean; RoleRegistryId: number }>(`SELECT * FROM "UserRegistry" WHERE "Id" = $1`, [self]);
      expect(row.RoleRegistryId).toBe(userAdminRole.id);
      // It still administers users of its own strength.
      expect((await weak.post('/api/UserRegistry', { name: 'esc-peer', roleRegistryId: userAdminRole.id, active: true, password: STRONG })).status).toBe(201);

      // A role administrator holding only 34 cannot grant 35, to a new role or to its own.
      const roleAdminRole = (await strong.browser.post('/api/RoleRegistry', { name: 'Role Admins', permissions: [Permission.ReadWriteSecurityRole], active: true })).json;
      await strong.browser.post('/api/UserRegistry', { name: 'esc-roleadmin', roleRegistryId: roleAdminRole.id, active: true, password: STRONG });
      const roleAdmin = await signIn('esc-roleadmin', STRONG);
      expect((await roleAdmin.post('/api/RoleRegistry', { name: 'Grab', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser], active: true })).status).toBe(403);
      expect((await roleAdmin.put(`/api/RoleRegistry/${roleAdminRole.id}`, { name: 'Role Admins', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser], active: true })).status).toBe(403);
      // Nor touch a role that holds more than it does.
      expect((await roleAdmin.put(`/api/RoleRegistry/${strong.role.id}`, { name: 'Esc Administrators', permissions: [], active: false })).status).toBe(403);
      const perms = await t.db.query<{ PermissionSpecificationId: number }>(
        `SELECT "PermissionSpecificationId" FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1`,
        [roleAdminRole.id],
      );
      expect(perms.map((p) => p.PermissionSpecificationId)).toEqual([34]);
      expect((await roleAdmin.post('/api/RoleRegistry', { name: 'Small', permissions: [Permission.ReadWriteSecurityRole], active: true })).status).toBe(201);
      expect((await roleAdmin.get('/api/Authentication/Session')).json.permissions).toEqual([34]);
    });
  });

  describe('ServiceChange messages', () => {
    it('publishes a message for every change of a tenant, role or user', async () => {
      changes.length = 0;
      const tenant = (await admin.post('/api/TenantRegistry', { name: 'Bus Bank', active: true })).json;
      await admin.put(`/api/TenantRegistry/${tenant.id}`, { name: 'Bus Bank 2', active: true });
      const role = (await admin.post('/api/RoleRegistry', { name: 'Bus Role', tenantRegistryId: tenant.id, permissions: [], active: true })).json;
      await admin.put(`/api/RoleRegistry/${role.id}`, { name: 'Bus Role 2', permissions: [Permission.ReadWriteSecurityUser], active: true });
      const user = (await admin.post('/api/UserRegistry', { name: 'bus-user', roleRegistryId: role.id, active: true, password: STRONG })).json;
      await admin.put(`/api/UserRegistry/${user.id}`, { email: 'bus@example.com' });
      await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: OTHER_STRONG, wirePasswordHash: false });
      await admin.delete(`/api/UserRegistry/${user.id}`);
      await delivered();
      expect(changes.map(({ entity, id, action }) => ({ entity, id, action }))).toEqual([
        { entity: 'TenantRegistry', id: tenant.id, action: 'created' },
        { entity: 'TenantRegistry', id: tenant.id, action: 'updated' },
        { entity: 'RoleRegistry', id: role.id, action: 'created' },
        { entity: 'RoleRegistry', id: role.id, action: 'updated' },
        { entity: 'UserRegistry', id: user.id, action: 'created' },
        { entity: 'UserRegistry', id: user.id, action: 'updated' },
        { entity: 'UserRegistry', id: user.id, action: 'updated' },
        { entity: 'UserRegistry', id: user.id, action: 'deleted' },
      ]);
      expect(changes.every((c) => new Date(c.at).getTime() === new Date(c.at).getTime() && !Number.isNaN(Date.parse(c.at)))).toBe(true);
    });

    it('a bus that refuses the message does not fail the change', async () => {
      const bus = t.app.get(Bus);
      const publish = bus.publish;
      bus.publish = async () => {
        throw new Error('broker down');
      };
      try {
        const res = await admin.post('/api/TenantRegistry', { name: 'Offline Bank', active: true });
        expect(res.status).toBe(201);
      } finally {
        bus.publish = publish;
      }
      expect(await t.db.query(`SELECT 1 FROM "TenantRegistry" WHERE "Name" = 'Offline Bank'`)).toHaveLength(1);
    });
  });

  it('documents every registry route, its DTOs and permission in the OpenAPI document', async () => {
    const res = await admin.get('/swagger/v1/swagger.json');
    expect(res.status).toBe(200);
    const paths = res.json.paths;
    expect(Object.keys(paths)).toEqual(
      expect.arrayContaining([
        '/api/TenantRegistry',
        '/api/TenantRegistry/{id}',
        '/api/RoleRegistry',
        '/api/RoleRegistry/{id}',
        '/api/PermissionSpecification',
        '/api/UserRegistry',
        '/api/UserRegistry/{id}',
        '/api/UserRegistry/{id}/Password',
      ]),
    );
    expect(JSON.stringify(paths['/api/UserRegistry'].post.responses['403'])).toMatch(/permission 35/);
    expect(JSON.stringify(paths['/api/RoleRegistry'].post.responses['403'])).toMatch(/permission 34/);
    expect(JSON.stringify(paths['/api/TenantRegistry'].get.responses['403'])).toMatch(/landlord/);
    expect(Object.keys(res.json.components.schemas)).toEqual(
      expect.arrayContaining(['CreateUserDto', 'UpdateUserDto', 'ResetPasswordDto', 'UserDto', 'CreateRoleDto', 'RoleDto', 'CreateTenantDto', 'TenantDto']),
    );
    expect(JSON.stringify(res.json.components.schemas.UserDto)).not.toMatch(/"password"/);
  });

  describe('hostile input: always a 4xx problem, never a 5xx', () => {
    it('refuses path ids that are not positive integers with 400', async () => {
      for (const id of ['abc', '0', '-1', '1.5', '1e3', '99999999999', '2147483648', '%20', '0x10', "1'--"]) {
        for (const [method, path] of [
          ['GET', `/api/UserRegistry/${id}`],
          ['PUT', `/api/UserRegistry/${id}`],
          ['DELETE', `/api/UserRegistry/${id}`],
          ['POST', `/api/UserRegistry/${id}/Password`],
          ['PUT', `/api/RoleRegistry/${id}`],
          ['PUT', `/api/TenantRegistry/${id}`],
        ]) {
          const res = await admin.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { body: { name: 'x', password: STRONG } });
          expect([method, path, res.status]).toEqual([method, path, 400]);
          expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
        }
      }
    });

    it('refuses wrong types, control characters and huge strings with 400', async () => {
      const role = (await admin.post('/api/RoleRegistry', { name: 'Hostile Role', permissions: [], active: true })).json;
      const badUsers = [
        { name: 'h1', roleRegistryId: String(role.id), active: true, password: STRONG },
        { name: 'h2', roleRegistryId: role.id, active: 'yes', password: STRONG },
        { name: 123, roleRegistryId: role.id, active: true, password: STRONG },
        { name: 'h\u0000nul', roleRegistryId: role.id, active: true, password: STRONG },
        { name: 'h\nline', roleRegistryId: role.id, active: true, password: STRONG },
        { name: 'h\u0085c1', roleRegistryId: role.id, active: true, password: STRONG },
        { name: '   ', roleRegistryId: role.id, active: true, password: STRONG },
        { name: 'x'.repeat(257), roleRegistryId: role.id, active: true, password: STRONG },
        { name: 'h3', roleRegistryId: 2 ** 40, active: true, password: STRONG },
        { name: 'h4', roleRegistryId: -1, active: true, password: STRONG },
        { name: 'h5', roleRegistryId: 1.5, active: true, password: STRONG },
        { name: 'h6', roleRegistryId: role.id, active: true, password: ['a'] },
        { name: 'h7', roleRegistryId: role.id, active: true, password: 'Aa1!'.repeat(600) },
        { name: 'h8', roleRegistryId: role.id, active: true },
        { name: 'h9', roleRegistryId: role.id, active: true, password: STRONG, email: { $ne: null } },
        { name: 'h10', roleRegistryId: role.id, active: true, password: STRONG, email: 'not an email' },
        { name: 'h11', roleRegistryId: role.id, active: true, password: STRONG, mustChangePassword: 'false' },
        [],
        'just a string',
      ];
      for (const body of badUsers) {
        const res = await admin.post('/api/UserRegistry', body);
        expect([JSON.stringify(body).slice(0, 60), res.status]).toEqual([JSON.stringify(body).slice(0, 60), 400]);
        expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      }
      expect(await t.db.query(`SELECT 1 FROM "UserRegistry" WHERE "RoleRegistryId" = $1`, [role.id])).toEqual([]);

      const badRoles = [
        { name: 'r1', permissions: '34', active: true },
        { name: 'r2', permissions: [34, 'x'], active: true },
        { name: 'r3', permissions: [2 ** 40], active: true },
        { name: 'r4', permissions: Array.from({ length: 5000 }, (_, i) => i + 1), active: true },
        { name: 'r5', tenantRegistryId: 'one', permissions: [], active: true },
        { name: 'r6', permissions: [], active: 1 },
      ];
      for (const body of badRoles) {
        const res = await admin.post('/api/RoleRegistry', body);
        expect([String(body.name), res.status]).toEqual([String(body.name), 400]);
      }
      expect((await admin.put(`/api/RoleRegistry/${role.id}`, { name: 'n\u007f', permissions: [] })).status).toBe(400);
      expect((await admin.post('/api/TenantRegistry', { name: { toString: 'x' }, active: true })).status).toBe(400);
      expect((await admin.post('/api/TenantRegistry', { active: true })).status).toBe(400);
      expect((await admin.post('/api/TenantRegistry', '{"name": ')).status).toBe(400);
      expect((await admin.post('/api/TenantRegistry', { name: 'y'.repeat(40_000), active: true })).status).toBe(413);
      const user = (await admin.post('/api/UserRegistry', { name: 'h-ok', roleRegistryId: role.id, active: true, password: STRONG })).json;
      expect((await admin.put(`/api/UserRegistry/${user.id}`, { passwordLocked: 'false' })).status).toBe(400);
      expect((await admin.put(`/api/UserRegistry/${user.id}`, { roleRegistryId: 999999 })).status).toBe(404);
      expect((await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: 12345, wirePasswordHash: false })).status).toBe(400);
      expect((await admin.post(`/api/UserRegistry/${user.id}/Password`, { password: 'g'.repeat(64), wirePasswordHash: true })).status).toBe(400);
    });
  });
});
