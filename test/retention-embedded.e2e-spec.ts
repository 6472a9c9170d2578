import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { createApp } from '../src/bootstrap';
import { ManualClock } from '../src/common/clock';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { PARTITIONED_AUDIT_TABLES, partitionName, periodStart, PARTITIONED_TELEMETRY_TABLES } from '../src/retention/partition-plan';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { firstAdministratorSignIn } from './helpers/users';

const DAY = 86_400_000;
const ADMIN_PASSWORD = 'Embedded-Adm1n-Pass';
const LOGIN = PARTITIONED_AUDIT_TABLES.find((t) => t.table === 'UserLogin')!;
const HEALTH = PARTITIONED_TELEMETRY_TABLES.find((t) => t.table === 'CaptureQueueHealth')!;

/**
 * Retention on the embedded default (PGlite, no ConnectionString): the same partitions, the same move
 * out of DEFAULT and the same drops (plain DETACH in one transaction), the audit drop sealed first.
 */
describe('retention without deletes on the embedded database (contract 16)', () => {
  let app: NestExpressApplication;
  let url: string;
  let db: DataSource;
  const start = Date.UTC(2026, 10, 25, 12, 0, 0);
  const clock = new ManualClock(start);

  beforeAll(async () => {
    const settings = resolveSecrets(
      loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-embedded-retention-')), LogLevel: 'error', AuditRetention: 'd/365', TelemetryRetention: 'd/30' }),
    );
    app = await createApp(settings, { logger: ['error'], clock });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    db = app.get(DataSource);
    await app.get(PartitionMaintenance).applyRetention();
  }, 180_000);
  afterAll(async () => {
    await app?.close();
  });

  it('stores stray dates in DEFAULT, moves them to their periods, drops the expired ones after a sealed run, and reads on', async () => {
    const browser = new Browser(url);
    const signIn = await firstAdministratorSignIn(browser, ADMIN_PASSWORD);
    expect(signIn.status).toBe(200);
    const old = new Date(start - 3 * 365 * DAY);
    const recent = new Date(start - 60 * DAY);
    await db.query(`INSERT INTO "UserLogin" ("CreatedUser", "CreatedDate") VALUES ('embedded-old', $1), ('embedded-recent', $2)`, [old, recent]);
    await db.query(`INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate") VALUES (1, 0, 41, $1), (1, 0, 42, $2)`, [
      new Date(start - 40 * DAY),
      new Date(start - 2 * DAY),
    ]);
    const where = async () =>
      (await db.query(`SELECT "CreatedUser" AS k, tableoid::regclass::text AS p FROM "UserLogin" WHERE "CreatedUser" LIKE 'embedded-%'
                        UNION ALL SELECT "DroppedCount"::text, tableoid::regclass::text FROM "CaptureQueueHealth" WHERE "DroppedCount" IN (41, 42)`)) as { k: string; p: string }[];
    expect((await where()).map((r) => r.p.replace(/"/g, '')).sort()).toEqual(['CaptureQueueHealth_default', 'CaptureQueueHealth_default', 'UserLogin_default', 'UserLogin_default']);
    await eventually(async () => {
      await app.get(AuditSealer).sealPending();
      return Number((await db.query(`SELECT count(*) AS n FROM "AuditPending"`))[0].n) === 0;
    }, 60_000);

    const report = await app.get(PartitionMaintenance).applyRetention();
    expect(report.dropped.sort()).toEqual([partitionName(HEALTH, periodStart('day', new Date(start - 40 * DAY))), partitionName(LOGIN, periodStart('month', old))].sort());
    expect(
      (await where())
        .map((r) => `${r.k}:${r.p.replace(/"/g, '')}`)
        .sort(),
    ).toEqual([`42:${partitionName(HEALTH, periodStart('day', new Date(start - 2 * DAY)))}`, `embedded-recent:${partitionName(LOGIN, periodStart('month', recent))}`]);
    const runs = (await db.query(`SELECT "Id"::text AS id, "PartitionName" AS name FROM "AuditRetentionRun"`)) as { id: string; name: string }[];
    expect(runs.map((r) => r.name)).toEqual([partitionName(LOGIN, periodStart('month', old))]);
    expect(await db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'AuditRetentionRun' AND "RowId" = $1`, [runs[0].id])).toHaveLength(1);

    // Reads and exports go on over the partitions.
    const token = signIn.json.token as string;
    const grid = await browser.get(`/api/UserLogin?from=${new Date(start - 400 * DAY).toISOString()}&to=${new Date(start + DAY).toISOString()}`, { authorization: `Bearer ${token}` });
    expect(grid.status).toBe(200);
    expect(grid.json.rows.map((r: { createdUser: string }) => r.createdUser)).toContain('embedded-recent');
    const csv = await browser.get(`/api/CaptureQueueHealth?format=csv&from=${new Date(start - 10 * DAY).toISOString()}&to=${new Date(start + DAY).toISOString()}`, {
      authorization: `Bearer ${token}`,
    });
    expect(csv.status).toBe(200);
    expect(csv.text.split('\n')[0]).toMatch(/^id,/);
  }, 180_000);
});
