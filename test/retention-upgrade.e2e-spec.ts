import { DataSource } from 'typeorm';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { dataSourceOptions } from '../src/database/data-source';
import { MIGRATIONS } from '../src/database/migrations';
import { PARTITIONED_TABLES } from '../src/retention/partition-plan';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';

const DAY = 86_400_000;
/** The migrations of the version before partitioning: the conversion migrations start at 1766100000000. */
const BEFORE = MIGRATIONS.filter((m) => Number(/(\d{13})$/.exec(m.name)![1]) < 1766100000000);

/** The tables this install holds, with the rows planted before the upgrade. */
const PLANTED = PARTITIONED_TABLES.filter((t) => ['CaptureQueueHealth', 'ModelInvokeWarning', 'ArchiverWarning', 'UserLogin', 'UserLogout'].includes(t.table));

const INSERTS: Record<string, string> = {
  CaptureQueueHealth: `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate") SELECT 1, i, 0, $1::timestamptz - i * interval '1 hour' FROM generate_series(1, $2) i`,
  ModelInvokeWarning: `INSERT INTO "ModelInvokeWarning" ("Message", "CreatedDate") SELECT 'm' || i, $1::timestamptz - i * interval '1 hour' FROM generate_series(1, $2) i`,
  ArchiverWarning: `INSERT INTO "ArchiverWarning" ("StageId", "DurationMicroseconds", "Instance", "CreatedDate") SELECT 1, i, 'old', $1::timestamptz - i * interval '1 hour' FROM generate_series(1, $2) i`,
  UserLogin: `INSERT INTO "UserLogin" ("CreatedUser", "RemoteIp", "CreatedDate") SELECT 'user' || i, '203.0.113.9', $1::timestamptz - i * interval '1 day' FROM generate_series(1, $2) i`,
  UserLogout: `INSERT INTO "UserLogout" ("CreatedUser", "CreatedDate") SELECT 'user' || i, $1::timestamptz - i * interval '1 day' FROM generate_series(1, $2) i`,
};

/**
 * An install of the previous version with rows in its tables, upgraded by starting this version: each
 * old table becomes one partition of the new table WITHOUT a copy (its storage file is the same file),
 * its indexes are adopted (the same files), and Ids go on above the old ones.
 */
describe('upgrading an existing install to partitioned tables (contract 16)', () => {
  let db: TestDatabase;
  let t: TestApp;
  const before = new Map<string, { file: string; indexFiles: string[]; rows: number; maxId: number }>();

  beforeAll(async () => {
    db = await createTestDatabase();
    const old = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: BEFORE }).initialize();
    await old.runMigrations({ transaction: 'each' });
    await old.destroy();
    for (const table of PLANTED) {
      await db.query(INSERTS[table.table], [new Date(), 500]);
      const [row] = await db.query<{ file: string; rows: string; maxId: string }>(
        `SELECT pg_relation_filenode($1::regclass)::text AS file, (SELECT count(*) FROM "${table.table}") AS rows, (SELECT max("Id") FROM "${table.table}") AS "maxId"`,
        [`"${table.table}"`],
      );
      const indexes = await db.query<{ file: string }>(`SELECT pg_relation_filenode(indexrelid)::text AS file FROM pg_index WHERE indrelid = $1::regclass AND NOT indisprimary`, [
        `"${table.table}"`,
      ]);
      before.set(table.table, { file: row.file, indexFiles: indexes.map((i) => i.file), rows: Number(row.rows), maxId: Number(row.maxId) });
    }
    t = await startTestApp({ db });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('attaches each old table whole as one partition: the same storage, the same index files, every row', async () => {
    for (const table of PLANTED) {
      const was = before.get(table.table)!;
      const [legacy] = await db.query<{ file: string; bound: string; parent: string }>(
        `SELECT pg_relation_filenode(c.oid)::text AS file, pg_get_expr(c.relpartbound, c.oid) AS bound, i.inhparent::regclass::text AS parent
           FROM pg_class c JOIN pg_inherits i ON i.inhrelid = c.oid WHERE c.relname = $1`,
        [`${table.table}_legacy`],
      );
      expect(legacy.parent.replace(/"/g, '')).toBe(table.table);
      expect(legacy.file).toBe(was.file);
      expect(legacy.bound).toMatch(/^FOR VALUES FROM \(MINVALUE\) TO \('/);
      const indexes = await db.query<{ file: string }>(`SELECT pg_relation_filenode(indexrelid)::text AS file FROM pg_index WHERE indrelid = $1::regclass`, [
        `"${table.table}_legacy"`,
      ]);
      for (const file of was.indexFiles) expect(indexes.map((i) => i.file)).toContain(file);
      const [{ rows, low }] = await db.query<{ rows: string; low: string }>(`SELECT count(*) AS rows, min("Id") AS low FROM "${table.table}"`);
      expect(Number(rows)).toBe(was.rows);
      expect(Number(low)).toBe(1);
    }
  });

  it('numbers new rows above the old ones, and stores them in the partitions', async () => {
    for (const table of PLANTED) {
      const was = before.get(table.table)!;
      const [row] = await db.query<{ Id: string; where: string }>(
        table.table === 'CaptureQueueHealth'
          ? `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount") VALUES (2, 0, 0) RETURNING "Id", tableoid::regclass::text AS where`
          : table.table === 'ModelInvokeWarning'
            ? `INSERT INTO "ModelInvokeWarning" ("Message") VALUES ('new') RETURNING "Id", tableoid::regclass::text AS where`
            : table.table === 'ArchiverWarning'
              ? `INSERT INTO "ArchiverWarning" ("StageId", "DurationMicroseconds", "Instance") VALUES (1, 1, 'new') RETURNING "Id", tableoid::regclass::text AS where`
            : `INSERT INTO "${table.table}" ("CreatedUser", "CreatedDate") VALUES ('new', now() + interval '40 days') RETURNING "Id", tableoid::regclass::text AS where`,
      );
      expect(Number(row.Id)).toBe(was.maxId + 1);
      expect(row.where).not.toMatch(/_default/);
    }
  });

  it('reads old and new rows through the one table', async () => {
    const [{ old, fresh }] = await db.query<{ old: string; fresh: string }>(
      `SELECT count(*) FILTER (WHERE "CreatedDate" < $1) AS old, count(*) FILTER (WHERE "QueueId" = 2) AS fresh FROM "CaptureQueueHealth"`,
      [new Date(Date.now() - DAY)],
    );
    expect(Number(old)).toBeGreaterThan(400);
    expect(Number(fresh)).toBe(1);
  });

  it('keeps the audit log going: the old rows and the new ones sealed once each, updates still refused on the old partition', async () => {
    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      const [{ waiting }] = await db.query<{ waiting: string }>(`SELECT count(*) AS waiting FROM "AuditPending"`);
      return Number(waiting) === 0;
    }, 120_000);
    for (const table of ['UserLogin', 'UserLogout']) {
      const [{ rows, leaves }] = await db.query<{ rows: string; leaves: string }>(
        `SELECT (SELECT count(*) FROM "${table}") AS rows, (SELECT count(*) FROM "AuditLeaf" WHERE "TableName" = $1) AS leaves`,
        [table],
      );
      expect(leaves).toBe(rows);
      await expect(db.query(`UPDATE "${table}_legacy" SET "CreatedUser" = 'x'`)).rejects.toThrow(/append-only/);
      await expect(db.query(`TRUNCATE "${table}_legacy"`)).rejects.toThrow(/append-only/);
    }
  }, 180_000);

  it('keeps the ArchiverWarning rollup counting through the parent, once per row', async () => {
    const [{ rows, rolled }] = await db.query<{ rows: string; rolled: string }>(
      `SELECT (SELECT count(*) FROM "ArchiverWarning") AS rows, (SELECT sum("Rows") FROM "ArchiverWarningMinute") AS rolled`,
    );
    expect(Number(rolled)).toBe(Number(rows));
    const triggers = await db.query<{ name: string }>(`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = '"ArchiverWarning_legacy"'::regclass AND NOT tgisinternal`);
    expect(triggers).toEqual([]);
  });
});
