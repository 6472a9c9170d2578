import { Browser } from './http';
import { TestApp } from './app';
import { Permission } from '../../src/access/permissions';

export const ADMIN_PASSWORD = 'Adm1nistrator!Strong';

/**
 * The seeded Administrator's first sign-in on a fresh database: its seeded password is already
 * expired, so the sign-in sets `newPassword`. Returns the answer for the test to judge.
 */
export function firstAdministratorSignIn(browser: Browser, newPassword: string) {
  return browser.post('/api/Authentication/ByUserNamePassword', {
    userName: 'Administrator',
    password: 'Administrator',
    newPassword,
    repeatNewPassword: newPassword,
  });
}

/**
 * Signs the seeded Administrator in, setting a strong password on the first sign-in (the seeded
 * password is already expired), on a test app or a service process at `url`. Returns a browser
 * holding the session cookie and the bearer token.
 */
export async function signInAdministrator(t: Pick<TestApp, 'url'>): Promise<{ browser: Browser; token: string }> {
  const browser = new Browser(t.url);
  let res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'Administrator', password: ADMIN_PASSWORD });
  if (res.status !== 200) res = await firstAdministratorSignIn(browser, ADMIN_PASSWORD);
  if (res.status !== 200) throw new Error(`administrator sign-in failed: ${res.status} ${res.text}`);
  return { browser, token: res.json.token as string };
}

/**
 * Creates `name`, administrator of Tenant A (permissions 34 and 35, not the landlord), and signs it
 * in: the caller a landlord-only route must refuse with 403.
 */
export async function signInTenantAdministrator(t: TestApp, name: string, password: string): Promise<Browser> {
  await insertUser(t, { name, password, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
  const browser = new Browser(t.url);
  const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password });
  if (res.status !== 200) throw new Error(`tenant administrator sign-in failed: ${res.status} ${res.text}`);
  return browser;
}

/**
 * Creates a user directly in the database (so tests of sign-in do not depend on the registry routes):
 * a role in the given tenant holding `permissions`, and a user with an Argon2id password that is not
 * expired unless asked.
 */
export async function insertUser(
  t: TestApp,
  user: {
    name: string;
    password?: string;
    tenantName?: string;
    landlord?: boolean;
    permissions?: number[];
    active?: boolean;
    expired?: boolean;
    wirePasswordHash?: boolean;
  },
): Promise<{ id: number; tenantRegistryId: number; roleRegistryId: number }> {
  const argon2 = await import('argon2');
  const tenantName = user.tenantName ?? (user.landlord ? 'Landlord' : 'Tenant A');
  let [tenant] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "TenantRegistry" WHERE "Name" = $1`, [tenantName]);
  if (!tenant) {
    [tenant] = await t.db.query<{ Id: number }>(
      `INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ($1, $2, true) RETURNING "Id"`,
      [tenantName, user.landlord ?? false],
    );
  }
  const [role] = await t.db.query<{ Id: number }>(
    `INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, $2, true) RETURNING "Id"`,
    [tenant.Id, `role-${user.name}`],
  );
  for (const permission of user.permissions ?? []) {
    await t.db.query(`INSERT INTO "RoleRegistryPermission" VALUES ($1, $2)`, [role.Id, permission]);
  }
  const hash = user.password
    ? await argon2.hash(user.password, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 })
    : null;
  const now = t.clock.now();
  const expiry = user.expired ? now : new Date(now.getTime() + 90 * 86_400_000);
  const [row] = await t.db.query<{ Id: number }>(
    `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active",
                                 "WirePasswordHash", "CreatedDate", "CreatedUser")
     VALUES ($1, $2, $3, $4, $5, $6, $7, $4, 'test') RETURNING "Id"`,
    [role.Id, user.name, hash, now, expiry, user.active ?? true, user.wirePasswordHash ?? false],
  );
  return { id: row.Id, tenantRegistryId: tenant.Id, roleRegistryId: role.Id };
}
