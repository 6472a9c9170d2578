import { DataSource } from 'typeorm';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { dataSourceOptions, migrate } from '../src/database/data-source';
import { MIGRATIONS } from '../src/database/migrations';
import { TamperEvidentAudit1766000000000 } from '../src/database/migrations/1766000000000-TamperEvidentAudit';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';

/**
 * An existing install upgraded to the audit log (migration TamperEvidentAudit): every row written
 * before becomes a leaf, once, oldest first (CreatedDate, then Id), whatever its Id; rows written
 * after the upgrade follow.
 */
describe('upgrading an install that already has audit rows', () => {
  let db: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    // The schema as the previous version left it.
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(TamperEvidentAudit1766000000000));
    const old = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: before }).initialize();
    await migrate(old);
    await old.destroy();
    await db.query(
      `INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId") VALUES
         (10, '2026-01-01T00:00:03Z', 'third', 1), (11, '2026-01-01T00:00:01Z', 'first', 1), (12, '2026-01-01T00:00:02Z', 'second-a', 1)`,
    );
    await db.query(`INSERT INTO "UserLogout" ("Id", "CreatedDate", "CreatedUser") VALUES (12, '2026-01-01T00:00:02Z', 'second-b'), (5, '2026-01-01T00:00:04Z', 'fourth')`);
    t = await startTestApp({ db });
  });
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('seals the rows written before the upgrade, oldest first, then the new ones', async () => {
    await db.query(`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId") VALUES (13, '2025-01-01Z', 'after-upgrade', 1)`);
    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      return (await db.query(`SELECT 1 FROM "AuditPending"`)).length === 0;
    });
    const leaves = await db.query<{ LeafIndex: string; TableName: string; RowId: string }>(
      `SELECT "LeafIndex"::text AS "LeafIndex", "TableName", "RowId"::text AS "RowId" FROM "AuditLeaf" l ORDER BY l."LeafIndex"`,
    );
    expect(leaves.map((l) => `${l.LeafIndex} ${l.TableName} ${l.RowId}`)).toEqual([
      '0 UserLogin 11',
      '1 UserLogin 12',
      '2 UserLogout 12',
      '3 UserLogin 10',
      '4 UserLogout 5',
      '5 UserLogin 13',
    ]);
    const [checkpoint] = await db.query<{ TreeSize: string }>(`SELECT "TreeSize"::text AS "TreeSize" FROM "AuditCheckpoint" ORDER BY "TreeSize" DESC LIMIT 1`);
    expect(checkpoint.TreeSize).toBe('6');
  });
});
