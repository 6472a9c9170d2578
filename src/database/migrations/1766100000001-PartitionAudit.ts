import { MigrationInterface, QueryRunner } from 'typeorm';
import { convertToPartitioned, FrozenPartitionedTable } from './partition-conversion.frozen';

/** The tables this migration converts, as they were when it was written (frozen: STYLE.md 15). */
const AUDIT_TABLES: readonly FrozenPartitionedTable[] = [
  { table: 'UserLogin', period: 'month' },
  { table: 'UserLogout', period: 'month' },
];

/**
 * Issue 20 (contract 16): UserLogin and UserLogout partitioned by month of CreatedDate, so retention
 * drops whole months instead of deleting rows (which the append-only triggers of contract 15 refuse
 * anyway). An existing table is attached whole as one partition: no row is copied, no Id changes, so
 * every leaf already sealed still names its row. The table's triggers (SearchText, append-only, the
 * sealer's enqueue) are re-created on the partitioned parent from their own definitions, which
 * PostgreSQL clones to every partition; the statement-level TRUNCATE refusal, which it does not clone,
 * is copied to each partition as it is made (partition-conversion.frozen.ts).
 */
export class PartitionAudit1766100000001 implements MigrationInterface {
  name = 'PartitionAudit1766100000001';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    const now = new Date();
    for (const table of AUDIT_TABLES) await convertToPartitioned(q, table, now);
  }

  async down(): Promise<void> {
    throw new Error('PartitionAudit cannot be reverted in place');
  }
}
