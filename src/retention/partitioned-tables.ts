import { TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { PARTITIONED_AUDIT_TABLES, PartitionedTable } from './partition-plan';

/**
 * Every table retention keeps in partitions (contract 16): the audit trails by month, and each
 * telemetry table by the period its description gives (telemetry/telemetry.tables.ts), so a new
 * table is kept and dropped like the others from its description alone.
 */
export const RETAINED_TABLES: readonly PartitionedTable[] = [
  ...PARTITIONED_AUDIT_TABLES,
  ...TELEMETRY_TABLES.map(({ read, retention }) => ({ table: read.table, period: retention, kind: 'telemetry' as const })),
];
