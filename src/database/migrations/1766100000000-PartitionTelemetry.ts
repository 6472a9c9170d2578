import { MigrationInterface, QueryRunner } from 'typeorm';
import { convertToPartitioned, FrozenPartitionedTable } from './partition-conversion.frozen';

/** The tables this migration converts, as they were when it was written (frozen: STYLE.md 15). */
const TELEMETRY_TABLES: readonly FrozenPartitionedTable[] = [
  'ArchiverStagePerformanceCounter',
  'CaseCreationStagePerformanceCounter',
  'ArchiverWarning',
  'CaseCreationWarning',
  'ModelInvokeWarning',
  'CaptureQueueHealth',
  'RedisConnectionEvent',
  'RedisSentinelEvent',
  'OpenTelemetryMetric',
].map((table) => ({ table, period: 'day' as const }));

/**
 * Issue 20 (contract 16): the nine telemetry tables partitioned by day of CreatedDate, so retention
 * drops whole days instead of deleting rows. An existing table is attached whole as one partition:
 * no row is copied (see partition-conversion.frozen.ts and docs/decisions/0020-retention-by-partition.md).
 * Outside a transaction: the index build and the CHECK validation must not lock writers out; each
 * table's switch is its own short transaction.
 */
export class PartitionTelemetry1766100000000 implements MigrationInterface {
  name = 'PartitionTelemetry1766100000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const now = new Date();
    for (const table of TELEMETRY_TABLES) await convertToPartitioned(q, table, now);
  }

  async down(): Promise<void> {
    // Going back would copy every row into a plain table; restore a backup taken before the upgrade instead.
    throw new Error('PartitionTelemetry cannot be reverted in place');
  }
}
