import { startTestApp } from './helpers/app';
import { createTestDatabase } from './helpers/database';
import { Permission } from '../src/access/permissions';

describe('migrations and seed on a shared database', () => {
  it('lets two nodes start at once: migrations run once under the advisory lock, the seed is written once', async () => {
    const db = await createTestDatabase();
    try {
      const [a, b] = await Promise.all([startTestApp({ db }), startTestApp({ db })]);
      try {
        const migrations = await db.query<{ name: string }>(`SELECT name FROM migrations ORDER BY id`);
        expect(new Set(migrations.map((m) => m.name)).size).toBe(migrations.length);
        expect(migrations[0].name).toBe('InitialSchema1763800000000');
        const users = await db.query<{ Name: string; PasswordExpiryDate: Date; CreatedUser: string }>(`SELECT * FROM "UserRegistry"`);
        expect(users).toEqual([expect.objectContaining({ Name: 'Administrator', CreatedUser: 'System' })]);
        const tenants = await db.query<{ Name: string; Landlord: boolean }>(`SELECT * FROM "TenantRegistry"`);
        expect(tenants).toEqual([expect.objectContaining({ Name: 'Landlord', Landlord: true })]);
        const roles = await db.query<{ Name: string; permissions: number[] }>(
          `SELECT r."Name", array_agg(p."PermissionSpecificationId" ORDER BY 1) AS permissions
             FROM "RoleRegistry" r JOIN "RoleRegistryPermission" p ON p."RoleRegistryId" = r."Id" GROUP BY r."Name"`,
        );
        expect(roles).toEqual([{ Name: 'Administrator', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] }]);
      } finally {
        await a.close();
        await b.close();
      }
      // A restart on the same database migrates nothing and seeds nothing more.
      const c = await startTestApp({ db });
      await c.close();
      expect(await db.query(`SELECT * FROM "UserRegistry"`)).toHaveLength(1);
    } finally {
      await db.drop();
    }
  });

  it('refuses to serve an expired seeded password until a new one is set', async () => {
    const t = await startTestApp({ env: { AdministratorInitialPassword: 'Seeded-Initial-Pa55' } });
    try {
      const res = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'Administrator', password: 'Seeded-Initial-Pa55' }),
      });
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe('PasswordChangeRequired');
    } finally {
      await t.close();
    }
  });
});
