import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AuditPending } from './audit-log.entities';

/**
 * Every statement on AuditPending: written by the AFTER INSERT triggers of the sealed tables (never
 * by the service), consumed by the sealer in the statement that seals the rows (AuditLeafRepository).
 */
@Injectable()
export class AuditPendingRepository {
  constructor(@InjectRepository(AuditPending) private readonly repository: Repository<AuditPending>) {}

  /**
   * Whether any row waits. Only rows of committed transactions are visible, and a row's entry commits
   * with it, so a late commit of a low Id simply waits for the next seal. The sealer consumes the
   * entries in the statement that appends their leaves (AuditLeafRepository.appendFromPending).
   */
  async any(tx: EntityManager): Promise<boolean> {
    const [row] = (await tx.query(`SELECT EXISTS (SELECT 1 FROM "AuditPending") AS "any"`)) as { any: boolean }[];
    return row.any;
  }

  /** How many rows wait to be sealed, and for how many seconds the oldest has (database time). */
  async status(): Promise<{ rows: number; oldestSeconds: number | null }> {
    const [row] = (await this.repository.query(
      `SELECT count(*)::float8 AS "rows", extract(epoch FROM now() - min("EnqueuedDate"))::float8 AS "oldestSeconds" FROM "AuditPending"`,
    )) as { rows: number; oldestSeconds: number | null }[];
    return { rows: row.rows, oldestSeconds: row.oldestSeconds === null ? null : Math.max(0, row.oldestSeconds) };
  }
}
