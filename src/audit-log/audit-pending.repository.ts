import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AuditPending } from './audit-log.entities';

export interface PendingRow {
  seq: string;
  tableName: string;
  rowId: string;
  /** Whether the row already has a leaf (enqueued twice: a second trigger, a repeated Id). */
  sealed: boolean;
}

/**
 * Every statement on AuditPending: written by the AFTER INSERT triggers of the sealed tables (never
 * by the service), consumed by the sealer in the transaction that seals the rows.
 */
@Injectable()
export class AuditPendingRepository {
  constructor(@InjectRepository(AuditPending) private readonly repository: Repository<AuditPending>) {}

  /**
   * The oldest waiting rows, in Seq order (about the order of writing; deterministic). Only rows of
   * committed transactions are visible, and a row's entry commits with it, so a late commit of a low
   * Id simply waits here for the next seal.
   */
  async batch(tx: EntityManager, limit: number): Promise<PendingRow[]> {
    return (await tx.query(
      `SELECT p."Seq"::text AS "seq", p."TableName" AS "tableName", p."RowId"::text AS "rowId",
              EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = p."TableName" AND l."RowId" = p."RowId") AS "sealed"
         FROM "AuditPending" p ORDER BY p."Seq" LIMIT $1`,
      [limit],
    )) as PendingRow[];
  }

  /** Removes the entries the sealing transaction consumed (committed with their leaves, or not at all). */
  async consume(tx: EntityManager, seqs: string[]): Promise<void> {
    if (seqs.length === 0) return;
    await tx.query(`DELETE FROM "AuditPending" WHERE "Seq" = ANY($1::bigint[])`, [seqs]);
  }

  /** How many rows wait to be sealed, and for how many seconds the oldest has (database time). */
  async status(): Promise<{ rows: number; oldestSeconds: number | null }> {
    const [row] = (await this.repository.query(
      `SELECT count(*)::float8 AS "rows", extract(epoch FROM now() - min("EnqueuedDate"))::float8 AS "oldestSeconds" FROM "AuditPending"`,
    )) as { rows: number; oldestSeconds: number | null }[];
    return { rows: row.rows, oldestSeconds: row.oldestSeconds === null ? null : Math.max(0, row.oldestSeconds) };
  }
}
