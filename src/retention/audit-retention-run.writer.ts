import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { AuditRetentionRecorder } from './partition-maintenance.service';

/** How long a drop waits for its record to be sealed before it leaves the partition to the next run. */
export const SEAL_WAIT_MS = 60_000;
const SEAL_POLL_MS = 200;

/**
 * The record of each audit partition drop (contract 16): an AuditRetentionRun row (the sealer of
 * contract 15 makes it a leaf, like any audited row), and the wait until that leaf exists, so the log
 * says what retention removed before it is removed. The verifier then counts a leaf whose row is gone
 * as removed by retention only when such a sealed run of its table has a Cutoff after the row's date.
 *
 * The two statements are on tables of audit-log/ (AuditRetentionRun, AuditLeaf), written here as SQL
 * because retention is their only writer of runs and the only reader of one leaf by row; a run
 * written earlier for the same partition and cutoff (a run that wrote it and then could not drop) is
 * waited for again rather than written twice.
 */
@Injectable()
export class AuditRetentionRunWriter extends AuditRetentionRecorder {
  /** How long a drop waits for its seal (a test shortens it to see a drop held back). */
  sealWaitMs = SEAL_WAIT_MS;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {
    super();
  }

  async recordDrop(entry: { tableName: string; partitionName: string; cutoff: Date; rowCount: number }): Promise<void> {
    const [earlier] = (await this.dataSource.query(
      `SELECT "Id"::text AS id FROM "AuditRetentionRun" WHERE "TableName" = $1 AND "PartitionName" = $2 AND "Cutoff" = $3 ORDER BY "Id" DESC LIMIT 1`,
      [entry.tableName, entry.partitionName, entry.cutoff],
    )) as { id: string }[];
    const id =
      earlier?.id ??
      (
        (await this.dataSource.query(
          `INSERT INTO "AuditRetentionRun" ("RunDate", "TableName", "PartitionName", "Cutoff", "RowCount") VALUES ($1, $2, $3, $4, $5) RETURNING "Id"::text AS id`,
          [this.clock.now(), entry.tableName, entry.partitionName, entry.cutoff, entry.rowCount],
        )) as { id: string }[]
      )[0].id;
    // Real time: the sealer runs on its own interval, whatever the test clock says.
    const deadline = Date.now() + this.sealWaitMs;
    for (;;) {
      const [sealed] = await this.dataSource.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'AuditRetentionRun' AND "RowId" = $1`, [id]);
      if (sealed) return;
      if (Date.now() > deadline) throw new Error(`AuditRetentionRun ${id} (${entry.partitionName}) was not sealed within ${this.sealWaitMs / 1000} s; the partition stays until the next run`);
      await new Promise((resolve) => setTimeout(resolve, SEAL_POLL_MS));
    }
  }
}
