import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { signInAdministrator } from './helpers/users';
import { ActionTypeId, CredentialTypeId } from '../src/admin-changes/admin-change.types';
import { COMPARE_AND_SET_ATTEMPTS } from '../src/database/transactions';
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
 * A registry change is made by compare-and-set (docs/decisions/0034): one statement changes the row
 * and records it only while the row still has the values the change was computed from. When a
 * concurrent change lands between the read and the write, the statement changes nothing, and after
 * COMPARE_AND_SET_ATTEMPTS such misses the change is read again under the row lock and made there.
 * Either way: the answer is the change asked for, each change is recorded once, and the history is a
 * chain (each before is the previous after), with nothing recorded as a change made in the database.
 */
describe('administrative changes by compare-and-set: a concurrent change between the read and the write', () => {
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

  it('makes a tenant rename whose read went stale again under the row lock: both renames answered and recorded once, before = the concurrent after', async () => {
    const created = await landlord.post('/api/TenantRegistry', { name: 'Stale Bank' });
    expect(created.status).toBe(201);
    const id = created.json.id;
    const from = await lastId(t);
    const tenants = t.app.get(TenantRegistryRepository);
    const concurrentAnswers: number[] = [];
    const reads = staleReads(tenants, 'findById', COMPARE_AND_SET_ATTEMPTS, async () => {
      const res = await landlord.put(`/api/TenantRegistry/${id}`, { name: 'Stale Bank (concurrent)' });
      concurrentAnswers.push(res.status);
    });
    const locked = jest.spyOn(tenants, 'findForChange');

    const res = await landlord.put(`/api/TenantRegistry/${id}`, { name: 'Stale Bank (mine)' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id, name: 'Stale Bank (mine)', landlord: false, active: true });
    expect(concurrentAnswers).toEqual(Array.from({ length: COMPARE_AND_SET_ATTEMPTS }, () => 200));
    // Each of mine and each concurrent change read once without the lock; mine then read under it.
    expect(reads.calls()).toBe(2 * COMPARE_AND_SET_ATTEMPTS);
    expect(locked).toHaveBeenCalledTimes(1);

    const [{ Name }] = await t.db.query<{ Name: string }>(`SELECT "Name" FROM "TenantRegistry" WHERE "Id" = $1`, [id]);
    expect(Name).toBe('Stale Bank (mine)');
    const rows = await rowsAfter(t, from);
    const names = [...Array.from({ length: COMPARE_AND_SET_ATTEMPTS }, () => 'Stale Bank (concurrent)'), 'Stale Bank (mine)'];
    expect(rows.map((r) => [r.ActionTypeId, r.CredentialTypeId, r.TargetTable, r.TargetId, r.TargetName, r.Changes])).toEqual(
      names.map((name, i) => {
        const before = i === 0 ? 'Stale Bank' : names[i - 1];
        return [ActionTypeId.TenantChanged, CredentialTypeId.Cookie, 'TenantRegistry', String(id), name, `{"name":[${JSON.stringify(before)},${JSON.stringify(name)}]}`];
      }),
    );
  });

  it(`makes a user change under the row lock after ${COMPARE_AND_SET_ATTEMPTS} stale read(s): every change recorded once, in a chain`, async () => {
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Contended Bank' });
    const role = await landlord.post('/api/RoleRegistry', { name: 'Contended', tenantRegistryId: tenant.json.id, permissions: [], active: true });
    const user = await landlord.post('/api/UserRegistry', { name: 'contended-user', roleRegistryId: role.json.id, active: true, password: USER_PASSWORD, email: 'start@example.com' });
    expect(user.status).toBe(201);
    const id = user.json.id;
    const from = await lastId(t);
    const users = t.app.get(UserRegistryRepository);
    const concurrentAnswers: number[] = [];
    staleReads(users, 'findVisible', COMPARE_AND_SET_ATTEMPTS, async (i) => {
      const res = await landlord.put(`/api/UserRegistry/${id}`, { email: `concurrent${i}@example.com` });
      concurrentAnswers.push(res.status);
    });
    const locked = jest.spyOn(users, 'lockForChange');

    const res = await landlord.put(`/api/UserRegistry/${id}`, { email: 'mine@example.com', passwordLocked: true });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id, email: 'mine@example.com', passwordLocked: true, active: true });
    expect(concurrentAnswers).toEqual(Array.from({ length: COMPARE_AND_SET_ATTEMPTS }, () => 200));
    // Only the last attempt took the row lock.
    expect(locked).toHaveBeenCalledTimes(1);

    const [now] = await t.db.query<{ Email: string; PasswordLocked: boolean; PasswordLockedDate: Date | null }>(
      `SELECT "Email", "PasswordLocked", "PasswordLockedDate" FROM "UserRegistry" WHERE "Id" = $1`,
      [id],
    );
    expect(now.Email).toBe('mine@example.com');
    expect(now.PasswordLocked).toBe(true);
    expect(now.PasswordLockedDate).not.toBeNull();
    const rows = await rowsAfter(t, from);
    // Nothing recorded twice, nothing recorded by the registry triggers as a change made in the database.
    expect(rows.every((r) => r.CredentialTypeId === CredentialTypeId.Cookie && r.ActionTypeId === ActionTypeId.UserChanged && r.TargetId === String(id))).toBe(true);
    const emails = [...Array.from({ length: COMPARE_AND_SET_ATTEMPTS }, (_, i) => `concurrent${i}@example.com`), 'mine@example.com'];
    expect(rows.map((r) => r.Changes)).toEqual(
      emails.map((email, i) => {
        const before = i === 0 ? 'start@example.com' : emails[i - 1];
        return i === emails.length - 1 ? `{"email":["${before}","${email}"],"passwordLocked":[false,true]}` : `{"email":["${before}","${email}"]}`;
      }),
    );
  });

  it('changes nothing when the user is deleted between the read and the write: 404, recorded as a refusal, never as a change', async () => {
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Gone Bank' });
    const role = await landlord.post('/api/RoleRegistry', { name: 'Gone', tenantRegistryId: tenant.json.id, permissions: [], active: true });
    const user = await landlord.post('/api/UserRegistry', { name: 'gone-user', roleRegistryId: role.json.id, active: true, password: USER_PASSWORD });
    const id = user.json.id;
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
