import { MigrationInterface, QueryRunner } from 'typeorm';

/** The append-only tables read by grids: written every minute (telemetry) or on every sign-in (audit). */
const TABLES = [
  'UserLogin',
  'UserLogout',
  'ArchiverStagePerformanceCounter',
  'CaseCreationStagePerformanceCounter',
  'ArchiverWarning',
  'CaseCreationWarning',
  'ModelInvokeWarning',
  'CaptureQueueHealth',
  'RedisConnectionEvent',
  'RedisSentinelEvent',
  'OpenTelemetryMetric',
];

/**
 * Issue 12: keep the newest rows all-visible. A grid read's count and statistics are index-only
 * scans of its window, and the default window is the newest hour: exactly the rows no VACUUM has
 * seen yet. By default autovacuum vacuums an insert-only table after 20 % of its size in new rows
 * (2 million rows on a 10M-row table: weeks), so index-only scans fetch every row of the window from
 * the heap. Measured at 1M rows (bench/RESULTS.md): a page read 157 ms with the newest hour
 * unvacuumed against 116 ms vacuumed (loaded machine). With a threshold of 1000 new rows and no
 * scale factor, autovacuum visits these tables about once a minute; each visit reads only the pages
 * not yet all-visible (the newest) and, with no dead rows, skips the indexes. Storage parameters
 * only: no rewrite, a brief lock per table.
 */
export class AppendOnlyAutovacuum1764400000001 implements MigrationInterface {
  name = 'AppendOnlyAutovacuum1764400000001';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`ALTER TABLE "${table}" SET (autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0)`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      await q.query(`ALTER TABLE "${table}" RESET (autovacuum_vacuum_insert_threshold, autovacuum_vacuum_insert_scale_factor)`);
    }
  }
}
