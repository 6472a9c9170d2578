import { SchedulerRegistry } from '@nestjs/schedule';
import { PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { addPeriods, partitionName, periodStart, PARTITIONED_TELEMETRY_TABLES } from '../src/retention/partition-plan';
import { startTestApp, TestApp } from './helpers/app';
import { signInAdministrator } from './helpers/users';

const DAY = 86_400_000;
const HEALTH = PARTITIONED_TELEMETRY_TABLES.find((t) => t.table === 'CaptureQueueHealth')!;

/** Each partition of a table with its bounds, read from the catalog (not from the service's own code). */
async function partitionsOf(t: TestApp, table: string): Promise<{ name: string; bound: string; rows: number }[]> {
  const rows = await t.db.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
    [`"${table}"`],
  );
  const out = [];
  for (const row of rows) {
    const [{ n }] = await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM "${row.name}"`);
    out.push({ ...row, rows: Number(n) });
  }
  return out;
}

/** Where each row of CaptureQueueHealth is stored, by its DroppedCount (used as a marker). */
async function whereIs(t: TestApp): Promise<Map<number, string>> {
  const rows = await t.db.query<{ marker: string; partition: string }>(
    `SELECT "DroppedCount" AS marker, tableoid::regclass::text AS partition FROM "CaptureQueueHealth"`,
  );
  return new Map(rows.map((r) => [Number(r.marker), r.partition.replace(/"/g, '')]));
}

describe('retention without deletes: telemetry partitioned by day (contract 16)', () => {
  let t: TestApp;
  let maintenance: PartitionMaintenance;
  let token: string;
  const start = Date.UTC(2026, 10, 25, 12, 0, 0);

  beforeAll(async () => {
    t = await startTestApp({ env: { TelemetryRetention: 'd/30' } });
    t.clock.set(start);
    maintenance = t.app.get(PartitionMaintenance);
    // The run the service started at bootstrap (on the real clock) is over before the test sets its own.
    await maintenance.applyRetention();
    ({ token } = await signInAdministrator(t));
    // A DELETE on the table (by retention or anyone) is refused from here on: rows may only leave by a partition drop.
    await t.db.query(`CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'DELETE refused'; END $$`);
    await t.db.query(`CREATE TRIGGER refuse_delete BEFORE DELETE ON "CaptureQueueHealth" FOR EACH ROW EXECUTE FUNCTION refuse_delete()`);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('has every telemetry table partitioned, with DEFAULT and the day partitions through two days ahead', async () => {
    // The daily job is a named cron job (docs/decisions/0014), next due within a day.
    const job = t.app.get(SchedulerRegistry).getCronJob('partition-retention');
    expect(job.nextDate().toJSDate().getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
    await maintenance.ensurePartitions();
    for (const table of PARTITIONED_TELEMETRY_TABLES) {
      const [{ kind }] = await t.db.query<{ kind: string }>(`SELECT relkind AS kind FROM pg_class WHERE oid = $1::regclass`, [`"${table.table}"`]);
      expect(kind).toBe('p');
      const names = (await partitionsOf(t, table.table)).map((p) => p.name);
      expect(names).toContain(`${table.table}_default`);
      for (let i = 0; i <= 2; i++) expect(names).toContain(partitionName(table, addPeriods('day', periodStart('day', new Date(start)), i)));
    }
  });

  it('stores rows dated from years ago to next month, each in the partition of its day once the job ran', async () => {
    const dated = new Map<number, Date>([
      [1, new Date(start - 3 * 365 * DAY)],
      [2, new Date(start - 40 * DAY)],
      [3, new Date(start - 10 * DAY)],
      [4, new Date(start)],
      [5, new Date(start + DAY)],
      [6, new Date(start + 35 * DAY)],
    ]);
    for (const [marker, date] of dated) {
      await t.db.query(`INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance") VALUES (1, 0, $1, $2, 'planted')`, [
        marker,
        date,
      ]);
    }
    // Stored at once, never refused: those with no partition of their day wait in DEFAULT.
    let where = await whereIs(t);
    expect(where.size).toBe(6);
    expect(where.get(1)).toBe('CaptureQueueHealth_default');
    expect(where.get(4)).toBe(partitionName(HEALTH, periodStart('day', new Date(start))));

    await maintenance.ensurePartitions();
    where = await whereIs(t);
    for (const [marker, date] of dated) expect(where.get(marker)).toBe(partitionName(HEALTH, periodStart('day', date)));
    expect((await partitionsOf(t, 'CaptureQueueHealth')).find((p) => p.name === 'CaptureQueueHealth_default')!.rows).toBe(0);

    // The grid reads across partitions as before.
    const res = await fetch(`${t.url}/api/CaptureQueueHealth?from=${new Date(start - 4 * 365 * DAY).toISOString()}&to=${new Date(start + 40 * DAY).toISOString()}&take=100`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { rows: { droppedCount: number | string; instance: string }[]; total: number };
    expect(body.rows.filter((r) => r.instance === 'planted').map((r) => Number(r.droppedCount)).sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('drops exactly the partitions whose whole day is older than TelemetryRetention, without a DELETE', async () => {
    const report = await maintenance.applyRetention();
    const cutoff = start - 30 * DAY;
    const where = await whereIs(t);
    // Markers 1 (three years ago) and 2 (40 days ago) went with their partitions; the DELETE trigger never fired.
    expect([...where.keys()].sort()).toEqual([3, 4, 5, 6]);
    expect(report.dropped).toEqual(
      expect.arrayContaining([partitionName(HEALTH, periodStart('day', new Date(start - 3 * 365 * DAY))), partitionName(HEALTH, periodStart('day', new Date(start - 40 * DAY)))]),
    );
    for (const table of PARTITIONED_TELEMETRY_TABLES) {
      for (const p of await partitionsOf(t, table.table)) {
        const to = /TO \('([^']+)'\)/.exec(p.bound)?.[1];
        if (to) expect(new Date(to).getTime()).toBeGreaterThan(cutoff);
      }
    }
    const [{ deleted }] = await t.db.query<{ deleted: string }>(
      `SELECT coalesce(sum(n_tup_del), 0) AS deleted FROM pg_stat_user_tables WHERE relname LIKE 'CaptureQueueHealth%'`,
    );
    expect(Number(deleted)).toBe(0);
  });

  it('keeps partitions two days ahead and drops by the moved clock on the next daily run', async () => {
    t.clock.set(start + 12 * DAY);
    const today = periodStart('day', new Date(start + 12 * DAY));
    // The migrations made the partitions of the real date's days ahead: when the moved clock lands among
    // them (on 7-9 December 2026 it does), the one two days ahead would already be there. It is a day
    // still to come and holds no row: removed here, so that the run must make it whatever the date.
    const ahead = partitionName(HEALTH, addPeriods('day', today, 2));
    expect((await partitionsOf(t, 'CaptureQueueHealth')).find((p) => p.name === ahead)?.rows ?? 0).toBe(0);
    await t.db.query(`DROP TABLE IF EXISTS "${ahead}"`);
    const report = await maintenance.applyRetention();
    const names = (await partitionsOf(t, 'CaptureQueueHealth')).map((p) => p.name);
    for (let i = 0; i <= 2; i++) expect(names).toContain(partitionName(HEALTH, addPeriods('day', today, i)));
    expect(report.created).toContain(ahead);
    // Marker 3 was 10 days old, now 22: still inside 30 days. Moving on by 25 days takes it.
    expect([...(await whereIs(t)).keys()].sort()).toEqual([3, 4, 5, 6]);
    t.clock.set(start + 25 * DAY);
    await maintenance.applyRetention();
    expect([...(await whereIs(t)).keys()].sort()).toEqual([4, 5, 6]);
    // Nothing to do: a run that finds every partition in place creates and drops nothing.
    const again = await maintenance.applyRetention();
    expect(again).toMatchObject({ ran: true, created: [], dropped: [], moved: {} });
  });

  it('puts back a DEFAULT partition found missing, so a stray date is stored again', async () => {
    await t.db.query(`ALTER TABLE "RedisSentinelEvent" DETACH PARTITION "RedisSentinelEvent_default"`);
    await t.db.query(`DROP TABLE "RedisSentinelEvent_default"`);
    await expect(t.db.query(`INSERT INTO "RedisSentinelEvent" ("EventName", "CreatedDate") VALUES ('stray', '2001-01-01')`)).rejects.toThrow(/no partition/);
    const report = await maintenance.ensurePartitions();
    expect(report.created).toContain('RedisSentinelEvent_default');
    await t.db.query(`INSERT INTO "RedisSentinelEvent" ("EventName", "CreatedDate") VALUES ('stray', '2001-01-01')`);
    const [{ where }] = await t.db.query<{ where: string }>(`SELECT tableoid::regclass::text AS where FROM "RedisSentinelEvent" WHERE "EventName" = 'stray'`);
    expect(where.replace(/"/g, '')).toBe('RedisSentinelEvent_default');
  });

  it('keeps the per-minute rollup of ArchiverWarning equal to its rows when rows are moved out of DEFAULT and when a day is dropped', async () => {
    t.clock.set(start + 25 * DAY);
    const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000);
    const old = minute(start + 25 * DAY - 40 * DAY);
    const recent = minute(start + 25 * DAY - 10 * DAY);
    for (const at of [old, recent]) {
      await t.db.query(`INSERT INTO "ArchiverWarning" ("StageId", "DurationMicroseconds", "CreatedDate", "Instance") VALUES (1, 7, $1, 'rollup')`, [at]);
    }
    const rollup = async (at: Date) =>
      (await t.db.query<{ rows: string }>(`SELECT "Rows" AS rows FROM "ArchiverWarningMinute" WHERE "Minute" = $1 AND "Instance" = 'rollup'`, [at])).map((r) => Number(r.rows));
    expect(await rollup(old)).toEqual([1]);
    await maintenance.ensurePartitions();
    // Moved into their days (re-inserted through the parent): still counted once.
    expect(await rollup(old)).toEqual([1]);
    expect(await rollup(recent)).toEqual([1]);
    const report = await maintenance.applyRetention();
    expect(report.dropped).toContain(partitionName({ table: 'ArchiverWarning', period: 'day', kind: 'telemetry' }, periodStart('day', old)));
    // The dropped day leaves the rollup too; the kept one stays.
    expect(await rollup(old)).toEqual([]);
    expect(await rollup(recent)).toEqual([1]);
  });
});
