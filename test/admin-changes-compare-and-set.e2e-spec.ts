import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { signInAdministrator } from './helpers/users';
import { ActionTypeId, CredentialTypeId } from '../src/admin-changes/admin-change.types';
import { TenantRegistryRepository } from '../src/users/tenant-registry.repository';
import { UserRegistryRepository } from '../src/users/user-registry.repository';

const USER_PASSWORD = 'Cas-User-Passw0rd!';

interface Row {
  ActionTypeId: number;
  CredentialTypeId: number;
  TargetTable: string;
  TargetId: string | null;
  TargetName: string | null;
  Changes: string;
}

async function lastId(t: TestApp): Promise<string> {
  const [{ id }] = await t.db.query<{ id: string }>(`SELECT coalesce(max("Id"), 0)::text AS id FROM "AdminChange"`);
  return id;
}

async function rowsAfter(t: TestApp, afterId: string): Promise<Row[]> {
  return t.db.query<Row>(
    `SELECT "ActionTypeId", "CredentialTypeId", "TargetTable", "TargetId"::text AS "TargetId", "TargetName", "Changes"
       FROM "AdminChange" WHERE "Id" > $1::bigint ORDER BY "Id"`,
    [afterId],
  );
}

/**
 * Makes `read` (a repository's plain read of the row a change starts from) answer what it read, but
 * only after `concurrent` has changed that row, the first `times` times it is called from outside
 * `concurrent` itself: the change then writes against a stale read, exactly as when another
 * administrator's change lands between its read and its write.
 */
function staleReads<T extends object, K extends keyof T>(target: T, method: K, times: number, concurrent: (i: number) => Promise<void>): { calls: () => number } {
  const original = (target[method] as unknown as (...args: unknown[]) => Promise<unknown>).bind(target);
  let injecting = false;
  let injected = 0;
  let calls = 0;
  jest.spyOn(target, method as never).mockImplementation((async (...args: unknown[]) => {
    calls += 1;
    const read = await original(...args);
    if (!injecting && injected < times) {
      injecting = true;
      try {
        await concurrent(injected);
      } finally {
        injected += 1;
        injecting = false;
      }
    }
    return read;
  }) as never);
  return { calls: () => calls };
}

/**
 * A registry member change locks its row, changes it and records it in one statement, with the Changes
 * text rendered from the row it locked (docs/decisions/0037). A concurrent change of a member being set,
 * landing between the read and the write, is therefore the recorded "before", not a miss: both changes
 * are answered, each is recorded once, the history is a chain (each before is the previous after), and
 * nothing is made again under a lock. Only a concurrent change of what the checks relied on (the user's
 * role, its deletion) makes the statement change nothing; the change is then checked again under the
 * row lock (a deleted user: 404, as a refusal). Nothing is ever recorded as a change made in the database.
 */
describe('administrative changes under one row lock: a concurrent change between the read and the write', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let landlord: Browser;

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: landlord } = await signInAdministrator(t));
  }, 120_000);
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await t?.close();
  });

  async function newUser(name: string, email: string | null) {
    const tenant = await landlord.post('/api/TenantRegistry', { name: `${name} Bank` });
    const role = await landlord.post('/api/RoleRegistry', { name: `${name} role`, tenantRegistryId: tenant.json.id, permissions: [], active: true });
    const other = await landlord.post('/api/RoleRegistry', { name: `${name} other role`, tenantRegistryId: tenant.json.id, permissions: [], active: true });
    const user = await landlord.post('/api/UserRegistry', { name, roleRegistryId: role.json.id, active: true, password: USER_PASSWORD, email });
    expect(user.status).toBe(201);
    return { id: user.json.id as number, tenantId: tenant.json.id as number, roleId: role.json.id as number, otherRoleId: other.json.id as number };
  }

  it('records a tenant rename whose read went stale with the concurrent name as its before: both answered, once each, a chain, no lock taken again', async () => {
    const created = await landlord.post('/api/TenantRegistry', { name: 'Stale "Bank" \\ ü' });
    expect(created.status).toBe(201);
    const id = created.json.id;
    const from = await lastId(t);
    const tenants = t.app.get(TenantRegistryRepository);
    const concurrentAnswers: number[] = [];
    const reads = staleReads(tenants, 'findById', 1, async () => {
      const res = await landlord.put(`/api/TenantRegistry/${id}`, { name: 'Stale "Bank" (concurrent) 😀' });
      concurrentAnswers.push(res.status);
    });
    const locked = jest.spyOn(tenants, 'findForChange');

    const res = await landlord.put(`/api/TenantRegistry/${id}`, { name: 'Stale "Bank" (mine) \\' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id, name: 'Stale "Bank" (mine) \\', landlord: false, active: true });
    expect(concurrentAnswers).toEqual([200]);
    // Mine and the concurrent change each read once; neither was made again under a lock.
    expect(reads.calls()).toBe(2);
    expect(locked).not.toHaveBeenCalled();

    const [{ Name }] = await t.db.query<{ Name: string }>(`SELECT "Name" FROM "TenantRegistry" WHERE "Id" = $1`, [id]);
    expect(Name).toBe('Stale "Bank" (mine) \\');
    const rows = await rowsAfter(t, from);
    const names = ['Stale "Bank" \\ ü', 'Stale "Bank" (concurrent) 😀', 'Stale "Bank" (mine) \\'];
    expect(rows.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.TargetTable, r.TargetId, r.TargetName, r.Changes])).toEqual(
      [1, 2].map((i) => [ActionTypeId.TenantChanged, CredentialTypeId.Cookie, 'TenantRegistry', String(id), names[i], `{"name":[${JSON.stringify(names[i - 1])},${JSON.stringify(names[i])}]}`]),
    );
  });

  it('records a user change whose read went stale with the concurrent e-mail as its before: both answered, once each, a chain, no lock taken again', async () => {
    const { id } = await newUser('contended-user', 'start@example.com');
    const from = await lastId(t);
    const users = t.app.get(UserRegistryRepository);
    const concurrentAnswers: number[] = [];
    staleReads(users, 'findVisible', 1, async () => {
      const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'concurrent@example.com' });
      concurrentAnswers.push(res.status);
    });
    const locked = jest.spyOn(users, 'lockForChange');

    const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'mine@example.com', passwordLocked: true });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id, email: 'mine@example.com', passwordLocked: true, active: true });
    expect(concurrentAnswers).toEqual([200]);
    expect(locked).not.toHaveBeenCalled();

    const [now] = await t.db.query<{ Email: string; PasswordLocked: boolean; PasswordLockedDate: Date | null }>(
      `SELECT "Email", "PasswordLocked", "PasswordLockedDate" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    );
    expect(now).toMatchObject({ Email: 'mine@example.com', PasswordLocked: true });
    expect(now.PasswordLockedDate).not.toBeNull();
    const rows = await rowsAfter(t, from);
    expect(rows.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.TargetId, r.Changes])).toEqual([
      [ActionTypeId.UserChanged, CredentialTypeId.Cookie, String(id), '{"email":["start@example.com","concurrent@example.com"]}'],
      [ActionTypeId.UserChanged, CredentialTypeId.Cookie, String(id), '{"email":["concurrent@example.com","mine@example.com"],"passwordLocked":[false,true]}'],
    ]);
  });

  it('records nothing for a change a concurrent writer already made: 200 with the row as it is, one row in all', async () => {
    const { id } = await newUser('same-value-user', 'start@example.com');
    const from = await lastId(t);
    staleReads(t.app.get(UserRegistryRepository), 'findVisible', 1, async () => {
      expect((await landlord.put(`/api/UserRegistry/${id}`, { email: 'same@example.com' })).status).toBe(200);
    });

    const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'same@example.com' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id, email: 'same@example.com' });
    const rows = await rowsAfter(t, from);
    expect(rows.map((r) => r.Changes)).toEqual(['{"email":["start@example.com","same@example.com"]}']);
  });

  it('checks again under the row lock when the role the checks relied on changed in between: made there, recorded once, a chain', async () => {
    const { id, roleId, otherRoleId } = await newUser('moved-user', 'start@example.com');
    const from = await lastId(t);
    const users = t.app.get(UserRegistryRepository);
    staleReads(users, 'findVisible', 1, async () => {
      expect((await landlord.put(`/api/UserRegistry/${id}`, { roleRegistryId: otherRoleId })).status).toBe(200);
    });
    const locked = jest.spyOn(users, 'lockForChange');

    const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'moved@example.com' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id, email: 'moved@example.com', roleRegistryId: otherRoleId });
    expect(locked).toHaveBeenCalledTimes(1);
    const rows = await rowsAfter(t, from);
    expect(rows.every((r) => r.CredentialTypeId === CredentialTypeId.Cookie && r.ActionTypeId === ActionTypeId.UserChanged)).toBe(true);
    expect(rows.map((r) => r.Changes)).toEqual([`{"roleRegistryId":[${roleId},${otherRoleId}]}`, '{"email":["start@example.com","moved@example.com"]}']);
  });

  it('keeps every change of 8 concurrent writers on one tenant: all answered, 8 rows, a chain ending at the name it has', async () => {
    const created = await landlord.post('/api/TenantRegistry', { name: 'Crowded Bank' });
    const id = created.json.id;
    const from = await lastId(t);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => landlord.put(`/api/TenantRegistry/${id}`, { name: `Crowded Bank ${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 8 }, () => 200));
    const rows = await rowsAfter(t, from);
    expect(rows).toHaveLength(8);
    const pairs = rows.map((r) => JSON.parse(r.Changes).name as [string, string]);
    expect(pairs[0][0]).toBe('Crowded Bank');
    for (let i = 1; i < pairs.length; i++) expect(pairs[i][0]).toBe(pairs[i - 1][1]);
    expect(new Set(pairs.map((p) => p[1]))).toEqual(new Set(Array.from({ length: 8 }, (_, i) => `Crowded Bank ${i}`)));
    const [{ Name }] = await t.db.query<{ Name: string }>(`SELECT "Name" FROM "TenantRegistry" WHERE "Id" = $1`, [id]);
    expect(Name).toBe(pairs[7][1]);
  });

  it('changes nothing when the user is deleted between the read and the write: 404, recorded as a refusal, never as a change', async () => {
    const { id } = await newUser('gone-user', null);
    const from = await lastId(t);
    staleReads(t.app.get(UserRegistryRepository), 'findVisible', 1, async () => {
      expect((await landlord.delete(`/api/UserRegistry/${id}`)).status).toBe(204);
    });

    const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'late@example.com' });
    expect(res.status).toBe(404);
    const [row] = await t.db.query<{ Email: string | null; Deleted: boolean }>(`SELECT "Email", "Deleted" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(row).toEqual({ Email: null, Deleted: true });
    // The deletion, then the refused change (404 for a target out of reach: Failed, Changes {}; contract 18).
    const rows = await t.db.query<{ ActionTypeId: number; CredentialTypeId: number; Failed: boolean; Changes: string }>(
      `SELECT "ActionTypeId", "CredentialTypeId", "Failed", "Changes" FROM "AdminChange" WHERE "Id" > $1::bigint ORDER BY "Id"`,
      [from],
    );
    expect(rows.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.Failed])).toEqual([
      [ActionTypeId.UserDeleted, CredentialTypeId.Cookie, false],
      [ActionTypeId.UserChanged, CredentialTypeId.Cookie, true],
    ]);
    expect(rows[1].Changes).toBe('{}');
  });
});
