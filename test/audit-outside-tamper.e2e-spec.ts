import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { firstAdministratorSignIn } from './helpers/users';
import { dataSourceOptions, migrate } from '../src/database/data-source';
import { MIGRATIONS } from '../src/database/migrations';
import { NoInheritedRows1767500000000 } from '../src/database/migrations/1767500000000-NoInheritedRows';
import { createTestDatabase } from './helpers/database';
import { AuditSealer, AUDIT_SEAL_LOCK_KEY } from '../src/audit-log/audit-sealer.service';
import { AuditOutside } from '../src/audit-outside/audit-outside.service';
import { AuditOutsideRepository } from '../src/audit-outside/audit-outside.repository';
import { run } from '../src/audit-log/verify/main';
import { ActionTypeId } from '../src/admin-changes/admin-change.types';
import { startTestApp, TestApp } from './helpers/app';
import { createKey } from './helpers/api-keys';
import { asSuperuser } from './helpers/audit-log';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { signInAdministrator } from './helpers/users';
import { sealAllPending, verifyService } from './helpers/sealing';

/**
 * Rows slipped past the log as an insider would (issue 29, contract 18), each against the real
 * service on PostgreSQL: what GET /api/Audit/Outside, the hourly check's ERROR line and
 * `npm run audit:verify` say, and what Adopt answers. The cases test/audit-outside.e2e-spec.ts and
 * test/audit-outside-ranges.e2e-spec.ts do not show: a leaf added by hand outside the signed tree (a
 * table owner may INSERT into AuditLeaf: the append-only trigger refuses only UPDATE, DELETE and
 * TRUNCATE), a row waiting over 60 s, a second row under a sealed row's Id (with and without a waiting
 * entry made for it by hand), a partition ATTACHed full of rows, the DEFAULT partition and a month
 * far away, Ids 0, negative and above the sequence, waiting entries naming no row, a rolled-back
 * change, a permission added in the database, tables inheriting from a registry table, from AuditLeaf
 * and from AuditRetentionRun, rows inserted and sealed while the check runs, concurrent checks, and a
 * partition swapped for a doctored copy. Each case uses Ids of its own, far from the others', and
 * removes what it slipped in (afterEach too, when a case fails half-way).
 */
describe('rows slipped past the log by an insider (issue 29, contract 18)', () => {
  jest.setTimeout(240_000);
  let t: TestApp;
  let logs: CapturedLogs;
  let landlord: Browser;
  let apiKey: string;

  const sealAll = () => sealAllPending(t.app);
  const verify = () => verifyService(t.url, apiKey);
  const outside = async () => {
    const res = await landlord.get('/api/Audit/Outside');
    expect(res.status).toBe(200);
    return res.json as { total: number; rows: { table: string; rowId: string; createdDate: string | null; canonical: string; reason: string }[] };
  };
  const named = (body: { rows: { table: string; rowId: string; createdDate: string | null; reason: string }[] }) =>
    body.rows.map((r) => [r.table, r.rowId, r.createdDate, r.reason]);
  const forge = (id: string | number, date: string, user: string) =>
    [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, $2, $3, 1, false)`, [String(id), date, user]] as [string, unknown[]];
  const leafCount = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditLeaf"`))[0].n;
  /** What the log holds after a case cleaned up: nothing outside, and the verifier passes. */
  const clean = async () => {
    await sealAll();
    expect(await outside()).toEqual({ total: 0, rows: [] });
    const { code, out } = await verify();
    expect(out.at(-1)).toMatch(/^verified \d+ leaves/);
    expect(code).toBe(0);
  };

  beforeAll(async () => {
    logs = new CapturedLogs();
    t = await startTestApp({ logger: logs });
    ({ browser: landlord } = await signInAdministrator(t));
    const [admin] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    apiKey = (await createKey(t, landlord, admin.Id, { name: 'verifier' })).apiKey;
    await sealAll();
    // The check at start has run (or runs now): later checks read only the leaves sealed since.
    expect(await t.app.get(AuditOutside).check()).toBe(0);
  }, 240_000);
  // Whatever a case left when it failed half-way, so the next one starts from a clean log: leaves
  // outside the signed tree, and rows that are no leaf's, removed as the superuser.
  afterEach(async () => {
    await t.db.query(`DROP TABLE IF EXISTS "AuditLeaf_shadow", "AuditRetentionRun_shadow", "RoleRegistryPermission_shadow"`);
    await asSuperuser(t.db, [[`DELETE FROM "AuditLeaf" WHERE "LeafIndex" < 0 OR "LeafIndex" >= (SELECT max("TreeSize") FROM "AuditCheckpoint")`]]);
    await sealAll();
    await asSuperuser(t.db, [
      [`DELETE FROM "UserLogin" t WHERE NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = 'UserLogin' AND l."RowId" = t."Id" AND l."RowCreatedDate" = t."CreatedDate")`],
    ]);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('names a row a table owner hid under a leaf of his own below the signed tree (LeafIndex -1), with the triggers on; the verifier exits 1; Adopt answers 409', async () => {
    const id = '1000000001';
    const date = '2026-11-20T10:00:00.654321Z';
    // No trigger is off: the row is enqueued as usual, and the leaf, which the append-only trigger does not
    // refuse (INSERT), makes the sealer take the entry as "sealed already" and the summaries balance.
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(...forge(id, date, 'hidden-under-leaf'));
      await client.query(
        `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
         VALUES (-1, 'UserLogin', $1, $2, sha256('x'), sha256('y'), now())`,
        [id, date],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await sealAll();
    const before = logs.count('error', /audit rows are outside the log/);

    const body = await outside();
    expect(body.total).toBe(1);
    expect(named(body)).toEqual([['UserLogin', id, '2026-11-20T10:00:00.654321Z', 'not-in-log']]);
    expect(JSON.parse(body.rows[0].canonical).slice(0, 4)).toEqual(['UserLogin', id, '2026-11-20T10:00:00.654321Z', 'hidden-under-leaf']);
    expect(await t.app.get(AuditOutside).check()).toBe(1);
    expect(logs.count('error', new RegExp(`1 audit rows are outside the log \\(first: UserLogin row ${id}, not-in-log\\)`))).toBe(before + 1);
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(new RegExp(`^FAILED: 1 rows outside the log; first: table UserLogin row ${id} is outside the log`));

    // Its Id has a leaf (a stray one): AuditLeaf holds one per Id, so no adoption can seal it; nothing is written.
    const leaves = await leafCount();
    const adopt = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: [id] });
    expect(adopt.status).toBe(409);
    expect(adopt.json.detail).toMatch(new RegExp(`UserLogin row ${id} shares its Id with a leaf of another row`));
    expect(await leafCount()).toBe(leaves);

    await asSuperuser(t.db, [[`DELETE FROM "AuditLeaf" WHERE "LeafIndex" = -1`], [`DELETE FROM "UserLogin" WHERE "Id" = $1`, [id]]]);
    await clean();
  });

  it('names a row under a leaf added above the signed tree\'s size, with another date (its keyed hash balances the summaries)', async () => {
    const id = '2000000001';
    const [{ size }] = await t.db.query<{ size: string }>(`SELECT max("TreeSize")::text AS "size" FROM "AuditCheckpoint"`);
    const far = String(BigInt(size) + 1_000_000n);
    await asSuperuser(t.db, [
      forge(id, '2026-11-21T00:00:00Z', 'twin-of-stray'),
      [
        `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
         VALUES ($1, 'UserLogin', $2, '2026-01-01T00:00:00Z', sha256('x'), sha256('y'), now())`,
        [far, id],
      ],
    ]);
    const body = await outside();
    expect(named(body)).toEqual([['UserLogin', id, '2026-11-21T00:00:00.000000Z', 'not-in-log']]);
    expect(body.total).toBe(1);
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(new RegExp(`first: table UserLogin row ${id} is outside the log`));
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: [id] })).status).toBe(409);
    await asSuperuser(t.db, [[`DELETE FROM "AuditLeaf" WHERE "LeafIndex" = $1`, [far]], [`DELETE FROM "UserLogin" WHERE "Id" = $1`, [id]]]);
    await clean();
  });

  it('names a row whose waiting entry is older than 60 s as waiting (the entry\'s EnqueuedDate, database time), and no longer once sealed', async () => {
    // The sealer is held off by its own lock, as when every node is down or stuck: the row waits.
    const holder = await t.db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [AUDIT_SEAL_LOCK_KEY]);
      const [row] = await t.db.query<{ Id: string }>(
        `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ('2026-11-22T09:30:00.5Z', 'slow-to-seal', 1, false) RETURNING "Id"::text AS "Id"`,
      );
      // Waiting 0 s: covered, not outside.
      expect(await outside()).toEqual({ total: 0, rows: [] });
      // The check compares the entry's EnqueuedDate with the database's now(): an entry 61 s old.
      await t.db.query(`UPDATE "AuditPending" SET "EnqueuedDate" = now() - interval '61 seconds' WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [row.Id]);
      const body = await outside();
      expect(body.total).toBe(1);
      expect(named(body)).toEqual([['UserLogin', row.Id, '2026-11-22T09:30:00.500000Z', 'waiting']]);
      expect(JSON.parse(body.rows[0].canonical).slice(0, 4)).toEqual(['UserLogin', row.Id, '2026-11-22T09:30:00.500000Z', 'slow-to-seal']);
      expect(await t.app.get(AuditOutside).check()).toBe(1);
      expect(logs.count('error', new RegExp(`1 audit rows are outside the log \\(first: UserLogin row ${row.Id}, waiting\\)`))).toBeGreaterThanOrEqual(1);
      const failed = await verify();
      expect(failed.code).toBe(1);
      expect(failed.out).toContain(`UserLogin row ${row.Id} (2026-11-22T09:30:00.500000Z) is outside the log: waiting`);
      expect(failed.out.at(-1)).toMatch(new RegExp(`^FAILED: 1 rows outside the log; first: table UserLogin row ${row.Id} is outside the log \\(waiting\\)`));

      // An entry dated ahead by hand so that it never ages: no trigger writes a date ahead of the clock.
      const [later] = await t.db.query<{ Id: string }>(
        `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ('2026-11-22T09:31:00Z', 'never-ages', 1, false) RETURNING "Id"::text AS "Id"`,
      );
      await t.db.query(`UPDATE "AuditPending" SET "EnqueuedDate" = 'infinity' WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [later.Id]);
      expect(named(await outside())).toEqual([
        ['UserLogin', row.Id, '2026-11-22T09:30:00.500000Z', 'waiting'],
        ['UserLogin', later.Id, '2026-11-22T09:31:00.000000Z', 'waiting'],
      ]);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [AUDIT_SEAL_LOCK_KEY]);
      holder.release();
    }
    await clean();
  });

  it('names a second row under a sealed row\'s Id even with a waiting entry made for it by hand, and Adopt answers 409 saying why', async () => {
    const [sealed] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" ORDER BY "Id" LIMIT 1`);
    await asSuperuser(t.db, [forge(sealed.Id, '2026-10-05T00:00:00Z', 'second-under-sealed-id')]);
    const body = await outside();
    expect(named(body)).toEqual([['UserLogin', sealed.Id, '2026-10-05T00:00:00.000000Z', 'not-in-log']]);

    // A waiting entry for that Id, by hand and with the sealer held off: waiting covers a row only while its Id has no leaf.
    const holder = await t.db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [AUDIT_SEAL_LOCK_KEY]);
      await t.db.query(`INSERT INTO "AuditPending" ("TableName", "RowId") VALUES ('UserLogin', $1)`, [sealed.Id]);
      const covered = await outside();
      expect(named(covered)).toEqual([['UserLogin', sealed.Id, '2026-10-05T00:00:00.000000Z', 'not-in-log']]);
      expect(covered.total).toBe(1);
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [AUDIT_SEAL_LOCK_KEY]);
      holder.release();
    }
    await sealAll();

    const leaves = await leafCount();
    const adopt = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: [sealed.Id] });
    expect(adopt.status).toBe(409);
    expect(adopt.json.detail).toMatch(/shares its Id with a leaf of another row \(a sealed row with another date/);
    expect(await leafCount()).toBe(leaves);
    // A 409 is not a refusal of the caller: no RowsAdopted row is written for it.
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AdminChange" WHERE "ActionTypeId" = $1`, [ActionTypeId.RowsAdopted]);
    expect(n).toBe(0);
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(new RegExp(`first: table UserLogin row ${sealed.Id} is outside the log \\(not-in-log\\)`));

    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = $1 AND "CreatedDate" = '2026-10-05T00:00:00Z'`, [sealed.Id]]]);
    await clean();

    // Two rows slipped in under one new Id: both named; Adopt refuses (409) rather than let the sealer pick one.
    await asSuperuser(t.db, [forge('8000000001', '2026-10-06T00:00:00Z', 'pair-a'), forge('8000000001', '2026-10-07T00:00:00Z', 'pair-b')]);
    expect(named(await outside())).toEqual([
      ['UserLogin', '8000000001', '2026-10-06T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', '8000000001', '2026-10-07T00:00:00.000000Z', 'not-in-log'],
    ]);
    const pair = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['8000000001'] });
    expect(pair.status).toBe(409);
    expect(pair.json.detail).toMatch(/UserLogin Id 8000000001 names more than one row/);
    expect(await leafCount()).toBe(leaves);
    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = 8000000001 AND "CreatedDate" = '2026-10-07T00:00:00Z'`]]);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['8000000001'] })).status).toBe(200);
    await clean();
  });

  it('names rows of a partition ATTACHed full of rows, of the DEFAULT partition (a month far away, an infinite date), and adopts those that can be sealed', async () => {
    // A month no partition covers yet, made as a table filled by hand and attached: no insert trigger fires.
    await t.db.query(`CREATE TABLE "UserLogin_forged" (LIKE "UserLogin" INCLUDING DEFAULTS)`);
    await t.db.query(`INSERT INTO "UserLogin_forged" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed")
                      VALUES (3000000001, '2031-03-01T00:00:00Z', 'attached-1', 1, false), (3000000002, '2031-03-02T00:00:00Z', 'attached-2', 1, false)`);
    await t.db.query(`ALTER TABLE "UserLogin" ATTACH PARTITION "UserLogin_forged" FOR VALUES FROM ('2031-03-01T00:00:00Z') TO ('2031-04-01T00:00:00Z')`);
    // Straight into the DEFAULT partition, with the triggers off: a date far away, and one no canonical form holds.
    await asSuperuser(t.db, [
      [`INSERT INTO "UserLogin_default" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (3100000001, '2199-12-31T23:59:59.999999Z', 'default-far', 1, false)`],
      [`INSERT INTO "UserLogin_default" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (3100000002, 'infinity', 'default-infinite', 1, false)`],
    ]);
    const body = await outside();
    expect(body.total).toBe(4);
    expect(named(body)).toEqual([
      // No date first (an infinite date has no canonical text), then oldest first.
      ['UserLogin', '3100000002', null, 'not-in-log'],
      ['UserLogin', '3000000001', '2031-03-01T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', '3000000002', '2031-03-02T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', '3100000001', '2199-12-31T23:59:59.999999Z', 'not-in-log'],
    ]);
    expect(JSON.parse(body.rows[0].canonical).slice(0, 4)).toEqual(['UserLogin', '3100000002', null, 'default-infinite']);
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(/^FAILED: 4 rows outside the log; first: table UserLogin row 3100000002 is outside the log/);

    // The infinite date cannot be sealed: refused (400), nothing adopted; the others are.
    const refused = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['3100000002'] });
    expect(refused.status).toBe(400);
    expect(refused.json.detail).toMatch(/3100000002/);
    const adopted = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['3000000001', '3000000002', '3100000001'] });
    expect(adopted.status).toBe(200);
    expect(adopted.json.adopted).toBe(3);
    await sealAll();
    expect(named(await outside())).toEqual([['UserLogin', '3100000002', null, 'not-in-log']]);

    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = 3100000002`]]);
    await clean();
  });

  it('names rows under Id 0, a negative Id and an Id above the sequence; adopts 0 and the high one, refuses the negative one (400)', async () => {
    const [{ next }] = await t.db.query<{ next: string }>(`SELECT (max("Id") + 5000000)::text AS "next" FROM "UserLogin"`);
    await asSuperuser(t.db, [
      forge(0, '2026-11-23T00:00:00Z', 'id-zero'),
      forge(-42, '2026-11-23T00:00:01Z', 'id-negative'),
      forge(next, '2026-11-23T00:00:02Z', 'id-above-sequence'),
      forge('9223372036854775807', '2026-11-23T00:00:03Z', 'id-largest'),
    ]);
    const body = await outside();
    expect(body.total).toBe(4);
    expect(named(body)).toEqual([
      ['UserLogin', '0', '2026-11-23T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', '-42', '2026-11-23T00:00:01.000000Z', 'not-in-log'],
      ['UserLogin', next, '2026-11-23T00:00:02.000000Z', 'not-in-log'],
      ['UserLogin', '9223372036854775807', '2026-11-23T00:00:03.000000Z', 'not-in-log'],
    ]);
    expect((await verify()).out.at(-1)).toMatch(/^FAILED: 4 rows outside the log; first: table UserLogin row 0 is outside the log/);
    const negative = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['-42'] });
    expect(negative.status).toBe(400);
    expect(negative.json.detail).toMatch(/negative Id cannot be sealed/);
    const adopted = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['0', next, '9223372036854775807'] });
    expect(adopted.status).toBe(200);
    await sealAll();
    expect(named(await outside())).toEqual([['UserLogin', '-42', '2026-11-23T00:00:01.000000Z', 'not-in-log']]);
    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = -42`]]);
    await clean();
  });

  it('takes waiting entries that name no row, or no sealed table, as nothing outside (no 500), and the sealer drops them', async () => {
    const holder = await t.db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock($1)', [AUDIT_SEAL_LOCK_KEY]);
      await t.db.query(`INSERT INTO "AuditPending" ("TableName", "RowId", "EnqueuedDate") VALUES ('UserLogin', 4000000001, now() - interval '1 hour'), ('UserRegistry', 1, now() - interval '1 hour'), ('UserLogout', 4000000002, now())`);
      expect(await outside()).toEqual({ total: 0, rows: [] });
    } finally {
      await holder.query('SELECT pg_advisory_unlock($1)', [AUDIT_SEAL_LOCK_KEY]);
      holder.release();
    }
    await clean();
  });

  it('leaves nothing of a change rolled back (no AdminChange, nothing outside), and records a permission added in the database', async () => {
    const changes = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AdminChange"`))[0].n;
    const before = await changes();
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`UPDATE "TenantRegistry" SET "Name" = 'rolled-back' WHERE "Id" = (SELECT min("Id") FROM "TenantRegistry")`);
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(...forge(5000000001, '2026-11-24T00:00:00Z', 'rolled-back'));
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect(await changes()).toBe(before);
    expect(await outside()).toEqual({ total: 0, rows: [] });

    // A permission taken from a role and granted back, in the database: the grant is recorded too.
    const [role] = await t.db.query<{ Id: number; Name: string; Permission: number }>(
      `SELECT r."Id", r."Name", p."PermissionSpecificationId" AS "Permission" FROM "RoleRegistry" r JOIN "RoleRegistryPermission" p ON p."RoleRegistryId" = r."Id"
        ORDER BY r."Id", p."PermissionSpecificationId" DESC LIMIT 1`,
    );
    await t.db.query(`DELETE FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1 AND "PermissionSpecificationId" = $2`, [role.Id, role.Permission]);
    const granted = await changes();
    await t.db.query(`INSERT INTO "RoleRegistryPermission" ("RoleRegistryId", "PermissionSpecificationId") VALUES ($1, $2)`, [role.Id, role.Permission]);
    const added = await t.db.query<{ ActionTypeId: number; CredentialTypeId: number; CreatedUser: string; TargetTable: string; TargetId: string; TargetName: string; Changes: string }>(
      `SELECT "ActionTypeId", "CredentialTypeId", "CreatedUser", "TargetTable", "TargetId"::text AS "TargetId", "TargetName", "Changes" FROM "AdminChange" ORDER BY "Id" OFFSET $1`,
      [granted],
    );
    expect(added).toEqual([
      {
        ActionTypeId: ActionTypeId.RoleChanged,
        CredentialTypeId: 4,
        CreatedUser: 'postgres',
        TargetTable: 'RoleRegistry',
        TargetId: String(role.Id),
        TargetName: role.Name,
        Changes: `{"PermissionSpecificationId":[null,${role.Permission}],"RoleRegistryId":[null,${role.Id}]}`,
      },
    ]);
    await clean();
  });

  it('refuses rows put in a table inheriting from a registry table, which no registry trigger sees (a permission granted unrecorded)', async () => {
    const changes = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AdminChange"`))[0].n;
    const before = await changes();
    const [role] = await t.db.query<{ Id: number; Permission: number }>(
      `SELECT r."Id", p."PermissionSpecificationId" AS "Permission" FROM "RoleRegistry" r JOIN "RoleRegistryPermission" p ON p."RoleRegistryId" = r."Id" ORDER BY 1, 2 LIMIT 1`,
    );
    await t.db.query(`CREATE TABLE "RoleRegistryPermission_shadow" () INHERITS ("RoleRegistryPermission")`);
    // The row would be read as the role's (a read of "RoleRegistryPermission" takes its children's rows), unrecorded.
    await expect(
      t.db.query(`INSERT INTO "RoleRegistryPermission_shadow" ("RoleRegistryId", "PermissionSpecificationId") VALUES ($1, $2)`, [role.Id, role.Permission]),
    ).rejects.toMatchObject({ code: '23514' });
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1 AND "PermissionSpecificationId" = $2`, [
      role.Id,
      role.Permission,
    ]);
    expect(n).toBe(1);
    // A table filled first and then made a child is refused too.
    await t.db.query(`DROP TABLE "RoleRegistryPermission_shadow"`);
    await t.db.query(`CREATE TABLE "RoleRegistryPermission_shadow" ("RoleRegistryId" integer NOT NULL, "PermissionSpecificationId" integer NOT NULL)`);
    await t.db.query(`INSERT INTO "RoleRegistryPermission_shadow" VALUES ($1, $2)`, [role.Id, role.Permission]);
    await expect(t.db.query(`ALTER TABLE "RoleRegistryPermission_shadow" INHERIT "RoleRegistryPermission"`)).rejects.toThrow(/constraint "RoleRegistryPermission_OwnRows"/);
    expect(await changes()).toBe(before);
  });

  it('names rows hidden by a leaf stored in a table inheriting from AuditLeaf, and a doctored copy of a sealed row stored in a table inheriting from AuditRetentionRun', async () => {
    const id = '7000000001';
    await asSuperuser(t.db, [forge(id, '2026-11-26T00:00:00Z', 'hidden-by-child-leaf')]);
    await t.db.query(`CREATE TABLE "AuditLeaf_shadow" () INHERITS ("AuditLeaf")`);
    // At a signed index (0): AuditLeaf's primary key does not reach its children.
    await t.db.query(
      `INSERT INTO "AuditLeaf_shadow" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
       VALUES (0, 'UserLogin', $1, '2026-11-26T00:00:00Z', sha256('x'), sha256('y'), now())`,
      [id],
    );
    // A retention run sealed as usual, then a copy of it with another RowCount in a child.
    const [run] = await t.db.query<{ Id: string }>(
      `INSERT INTO "AuditRetentionRun" ("RunDate", "TableName", "PartitionName", "Cutoff", "RowCount") VALUES ('2026-11-26T01:00:00Z', 'UserLogin', 'UserLogin_p202001', '2020-02-01T00:00:00Z', 0) RETURNING "Id"::text AS "Id"`,
    );
    await sealAll();
    await t.db.query(`CREATE TABLE "AuditRetentionRun_shadow" () INHERITS ("AuditRetentionRun")`);
    await t.db.query(`INSERT INTO "AuditRetentionRun_shadow" SELECT "Id", "RunDate", "TableName", "PartitionName", "Cutoff", 999 FROM ONLY "AuditRetentionRun" WHERE "Id" = $1`, [run.Id]);

    const body = await outside();
    expect(named(body)).toEqual([
      ['UserLogin', id, '2026-11-26T00:00:00.000000Z', 'not-in-log'],
      ['AuditRetentionRun', run.Id, '2026-11-26T01:00:00.000000Z', 'not-in-log'],
    ]);
    expect(body.total).toBe(2);
    // The verifier stops earlier: the child's leaf is served beside the signed leaf 0.
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toBe('FAILED: leaf 1: the service answered leaf 0 in its place (leaves duplicated or reordered)');
    // Neither can be adopted: the row's Id has a leaf (the child's), the copy lives outside the table.
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: [id] })).status).toBe(409);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'AuditRetentionRun', rowIds: [run.Id] })).status).toBe(400);

    await t.db.query(`DROP TABLE "AuditLeaf_shadow", "AuditRetentionRun_shadow"`);
    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = $1`, [id]]]);
    await clean();
  });

  it('names nothing while rows are inserted and sealed during the check (each range\'s two sides are one snapshot)', async () => {
    let inserting = true;
    const writer = (async () => {
      for (let i = 0; inserting && i < 200; i++) {
        await t.db.query(
          `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed") SELECT 'busy-' || g, 1, false FROM generate_series(1, 50) g`,
        );
      }
    })();
    const sealer = (async () => {
      while (inserting) await t.app.get(AuditSealer).sealPending();
    })();
    try {
      for (let i = 0; i < 5; i++) expect(await outside()).toEqual({ total: 0, rows: [] });
    } finally {
      inserting = false;
      await writer;
      await sealer;
    }
    await clean();
  });

  it('runs one check at a time: concurrent calls share one, and a call during a check is answered by one that started after it', async () => {
    const repository = t.app.get(AuditOutsideRepository);
    const spy = jest.spyOn(repository, 'find');
    try {
      // A check in progress (the hourly one), then a row slipped in, then calls: they must see the row.
      const hourly = t.app.get(AuditOutside).check();
      await asSuperuser(t.db, [forge(6000000001, '2026-11-25T00:00:00Z', 'during-a-check')]);
      const answers = await Promise.all([1, 2, 3, 4].map(() => landlord.get('/api/Audit/Outside')));
      await hourly;
      for (const a of answers) {
        expect(a.status).toBe(200);
        expect(named(a.json)).toEqual([['UserLogin', '6000000001', '2026-11-25T00:00:00.000000Z', 'not-in-log']]);
      }
      // The hourly check and one shared by the four calls (two if the hourly one had ended before they came).
      expect(spy.mock.calls.length).toBeLessThanOrEqual(3);
      expect(spy.mock.calls.length).toBeGreaterThanOrEqual(2);
    } finally {
      spy.mockRestore();
    }
    await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = 6000000001`]]);
    await clean();
  });

  it('leaves a partition swapped for a doctored copy to the verifier, which names the changed row', async () => {
    // The partition holding this month's sign-ins, detached and replaced by a copy with one name changed.
    const [{ partition, id }] = await t.db.query<{ partition: string; id: string }>(
      `SELECT tableoid::regclass::text AS "partition", "Id"::text AS "id" FROM "UserLogin" WHERE "CreatedUser" = 'Administrator' ORDER BY "Id" LIMIT 1`,
    );
    const [{ bound }] = await t.db.query<{ bound: string }>(`SELECT pg_get_expr(c.relpartbound, c.oid) AS "bound" FROM pg_class c WHERE c.oid = $1::regclass`, [partition]);
    await t.db.query(`CREATE TABLE "UserLogin_doctored" (LIKE "UserLogin" INCLUDING DEFAULTS)`);
    await t.db.query(`INSERT INTO "UserLogin_doctored" SELECT * FROM ${partition}`);
    await t.db.query(`UPDATE "UserLogin_doctored" SET "CreatedUser" = 'someone-else' WHERE "Id" = $1`, [id]);
    await t.db.query(`ALTER TABLE "UserLogin" DETACH PARTITION ${partition}`);
    await t.db.query(`ALTER TABLE "UserLogin" ATTACH PARTITION "UserLogin_doctored" ${bound}`);
    try {
      // Same Ids and dates: nothing outside; the rows no longer match their leaves.
      expect(await outside()).toEqual({ total: 0, rows: [] });
      const failed = await verify();
      expect(failed.code).toBe(1);
      expect(failed.out.at(-1)).toMatch(new RegExp(`^FAILED: .*\\(UserLogin ${id}\\)`));
    } finally {
      await t.db.query(`ALTER TABLE "UserLogin" DETACH PARTITION "UserLogin_doctored"`);
      await t.db.query(`ALTER TABLE "UserLogin" ATTACH PARTITION ${partition} ${bound}`);
    }
    await clean();
  });

  it('leaves a TRUNCATE of a sealed table (triggers off) to the verifier, which names the first missing row; nothing is outside (last: the log stays broken)', async () => {
    const [first] = await t.db.query<{ leafIndex: string; rowId: string }>(
      `SELECT "LeafIndex"::text AS "leafIndex", "RowId"::text AS "rowId" FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' ORDER BY "LeafIndex" LIMIT 1`,
    );
    await asSuperuser(t.db, [[`TRUNCATE "UserLogin"`]]);
    expect(await outside()).toEqual({ total: 0, rows: [] });
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(new RegExp(`^FAILED: leaf ${first.leafIndex} \\(UserLogin ${first.rowId}\\): row missing, and no sealed retention run of UserLogin covers`));
  });
});

/**
 * The two holes closed here, on the embedded default (PGlite, no ConnectionString): its one user is a
 * superuser and owns every table, so the same insider statements apply.
 */
describe('rows slipped past the log by an insider, on the embedded database (issue 29)', () => {
  jest.setTimeout(240_000);
  let app: NestExpressApplication;
  let db: DataSource;
  let url: string;

  beforeAll(async () => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-tamper-embedded-')), LogLevel: 'error' }));
    app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    db = app.get(DataSource);
  }, 240_000);
  afterAll(async () => {
    await app?.close();
  });

  it('names a row hidden under a leaf at LeafIndex -1 (the verifier exits 1, Adopt 409), and refuses a child of a registry table', async () => {
    const landlord = new Browser(url);
    expect((await firstAdministratorSignIn(landlord, 'Embedded-Tamper-Pass1')).status).toBe(200);
    const [admin] = (await db.query(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`)) as { Id: number }[];
    const key = await landlord.post(`/api/UserRegistry/${admin.Id}/ApiKey`, { name: 'embedded-verifier' });
    expect(key.status).toBe(201);
    const sealAll = async () => {
      for (let i = 0; i < 20; i++) {
        await app.get(AuditSealer).sealPending();
        const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM "AuditPending"`)) as { n: number }[];
        if (n === 0) return;
      }
      throw new Error('rows still wait to be sealed');
    };
    await sealAll();
    await db.transaction(async (tx) => {
      await tx.query(`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (1000000001, '2026-11-20T10:00:00Z', 'hidden-under-leaf', 1, false)`);
      await tx.query(
        `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate") VALUES (-1, 'UserLogin', 1000000001, '2026-11-20T10:00:00Z', sha256('x'), sha256('y'), now())`,
      );
    });
    await sealAll();
    const outside = await landlord.get('/api/Audit/Outside');
    expect(outside.status).toBe(200);
    expect(outside.json.rows.map((r: any) => [r.table, r.rowId, r.createdDate, r.reason])).toEqual([['UserLogin', '1000000001', '2026-11-20T10:00:00.000000Z', 'not-in-log']]);
    expect(outside.json.total).toBe(1);
    const out: string[] = [];
    expect(await run(['--url', url, '--api-key', key.json.apiKey], (l) => out.push(l), (l) => out.push(l))).toBe(1);
    expect(out.at(-1)).toMatch(/^FAILED: 1 rows outside the log; first: table UserLogin row 1000000001 is outside the log/);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['1000000001'] })).status).toBe(409);

    await db.query(`CREATE TABLE "UserRegistryApiKey_shadow" () INHERITS ("UserRegistryApiKey")`);
    await expect(db.query(`INSERT INTO "UserRegistryApiKey_shadow" SELECT * FROM "UserRegistryApiKey" LIMIT 1`)).rejects.toThrow(/UserRegistryApiKey_OwnRows/);
    expect(await app.get(AuditOutside).check()).toBe(1);
  });
});

/**
 * Migration NoInheritedRows on an install where someone already made a child of a registry table: an
 * empty child is given the constraint with its parent; a child holding rows stops the upgrade, naming
 * it (those rows were read as the registry's, and no trigger saw them).
 */
describe('upgrading an install whose registry has a child table (migration NoInheritedRows)', () => {
  jest.setTimeout(180_000);

  it('refuses while a child holds rows, naming it; upgrades once it is empty, and the child can hold none after', async () => {
    const db = await createTestDatabase();
    try {
      const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(NoInheritedRows1767500000000));
      const old = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: before }).initialize();
      try {
        await migrate(old);
        await old.query(`CREATE TABLE "TenantRegistry_shadow" () INHERITS ("TenantRegistry")`);
        await old.query(`INSERT INTO "TenantRegistry_shadow" ("Id", "Name", "Landlord") VALUES (900, 'Shadow Landlord', true)`);
      } finally {
        await old.destroy();
      }
      const upgrade = async () => {
        const next = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: MIGRATIONS }).initialize();
        try {
          await migrate(next);
        } finally {
          await next.destroy();
        }
      };
      await expect(upgrade()).rejects.toThrow(/table "TenantRegistry_shadow" is a child of "TenantRegistry" \(INHERITS\) and holds rows/);
      await db.query(`DELETE FROM "TenantRegistry_shadow"`);
      await upgrade();
      await expect(db.query(`INSERT INTO "TenantRegistry_shadow" ("Id", "Name", "Landlord") VALUES (900, 'Shadow Landlord', true)`)).rejects.toMatchObject({ code: '23514' });
    } finally {
      await db.drop();
    }
  });
});
