import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { startTestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { CapturedLogs } from './helpers/logs';
import { sealAllPending } from './helpers/sealing';
import { startServiceProcess } from './helpers/service-process';
import { signInAdministrator } from './helpers/users';

/**
 * The search path of the service's sessions (src/database/search-path.ts) on PostgreSQL. The suite's
 * role is `postgres`, so the default path's `"$user"` is a schema named postgres: made by someone who
 * may create schemas, with tables named like the service's, it would come before the service's own in
 * every unqualified statement. The service pins each session to the schema of its tables, refuses to
 * start when two schemas of the path hold them, and keeps working for an install whose role has a
 * schema of its own (given in ConnectionString's options).
 */
describe('search path of the service\'s sessions', () => {
  const dbs: TestDatabase[] = [];
  const database = async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    return db;
  };
  afterAll(async () => {
    for (const db of dbs) await db.drop();
  });

  it('a schema named after the role, with tables named like the service\'s, is never read or written: the service keeps to its own schema and says so', async () => {
    const db = await database();
    const first = await startTestApp({ db });
    await signInAdministrator(first);
    await first.close();

    // Someone who may create schemas shadows the sign-in trail and the log, with one forged sign-in.
    await db.query(`CREATE SCHEMA postgres`);
    await db.query(`CREATE TABLE postgres."UserLogin" (LIKE public."UserLogin" INCLUDING DEFAULTS)`);
    await db.query(`CREATE TABLE postgres."AuditLeaf" (LIKE public."AuditLeaf" INCLUDING DEFAULTS)`);
    await db.query(`INSERT INTO postgres."UserLogin" ("Id", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (999999, 'shadow-forged', 1, false)`);
    const [{ current }] = await db.query<{ current: string }>(`SELECT current_schema() AS "current"`);
    expect(current).toBe('postgres'); // what an unpinned session of the service would use

    const logs = new CapturedLogs();
    const t = await startTestApp({ db, logger: logs });
    try {
      expect(logs.count('warn', /^the schema "postgres" comes first in the search path, but the service's tables are in "public": the service uses "public" only$/)).toBe(1);
      // Each of the service's sessions starts pinned, and without JIT (database.module.ts).
      const [settings] = await t.app.get(DataSource).query(`SELECT current_setting('search_path') AS "path", current_setting('jit') AS "jit", current_schema() AS "schema"`);
      expect(settings).toEqual({ path: '"public",pg_temp', jit: 'off', schema: 'public' });
      const { browser: landlord } = await signInAdministrator(t);
      await sealAllPending(t.app);
      // The new sign-in went to the service's table, none to the shadow; the forged row is not listed.
      expect((await db.query(`SELECT "CreatedUser" FROM postgres."UserLogin"`)).map((r) => r.CreatedUser)).toEqual(['shadow-forged']);
      expect(await db.query(`SELECT 1 FROM postgres."AuditLeaf"`)).toHaveLength(0);
      const listed = await landlord.get('/api/UserLogin?take=100');
      expect(listed.status).toBe(200);
      // The first start's two (the seeded password refused as expired, then changed) and this one.
      expect(listed.json.total).toBe(3);
      expect(listed.json.rows.map((r: any) => r.createdUser)).not.toContain('shadow-forged');
      // The log and its outside check are the service's own: every row of public is sealed.
      expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
      expect((await landlord.get('/api/Audit/Checkpoint')).json.treeSize).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
    }
  });

  it('refuses to start when two schemas of the search path hold the service\'s tables, at once and naming both', async () => {
    const db = await database();
    const first = await startTestApp({ db });
    await first.close();
    await db.query(`CREATE SCHEMA postgres`);
    await db.query(`CREATE TABLE postgres."migrations" (LIKE public."migrations")`);
    await db.query(`CREATE TABLE postgres."UserLogin" (LIKE public."UserLogin")`);
    const service = startServiceProcess({ ConnectionString: db.url, DataDirectory: mkdtempSync(join(tmpdir(), 'tm-path-')), Port: '0' });
    expect(await service.exited()).not.toBe(0);
    expect(service.stdout() + service.stderr()).toContain(
      `the service's tables are in more than one schema of the search path ("postgres", "public"): give the service a search_path that holds only its own`,
    );
    expect(service.stdout() + service.stderr()).not.toMatch(/listening on/);
    // Not retried as an unreachable database would be (ten times, 3 s apart).
    expect(service.stdout() + service.stderr()).not.toMatch(/Retrying \(/);
  });

  it('an install in a schema of its own (search_path in ConnectionString\'s options) is created and used there, public left empty', async () => {
    const db = await database();
    await db.query(`CREATE SCHEMA "tm monitor"`);
    const url = new URL(db.url);
    url.searchParams.set('options', '-c search_path="tm\\ monitor"');
    const t = await startTestApp({ db, env: { ConnectionString: url.toString() } });
    try {
      const { browser: landlord } = await signInAdministrator(t);
      expect((await landlord.post('/api/TenantRegistry', { name: 'schema-tenant' })).status).toBe(201);
      await sealAllPending(t.app);
      expect(await db.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'public'`)).toHaveLength(0);
      expect(await db.query(`SELECT "CreatedUser" FROM "tm monitor"."UserLogin"`)).toHaveLength(2);
      // The service's mark still reaches its sessions beside the operator's options: its own change is recorded once, as the service's.
      const changes = await db.query<{ CredentialTypeId: number }>(`SELECT "CredentialTypeId" FROM "tm monitor"."AdminChange" WHERE "TargetTable" = 'TenantRegistry'`);
      expect(changes).toHaveLength(1);
      expect(changes[0].CredentialTypeId).not.toBe(4);
      expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    } finally {
      await t.close();
    }
  });
});
