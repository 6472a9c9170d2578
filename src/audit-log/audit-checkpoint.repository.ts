import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AuditCheckpoint } from './audit-log.entities';

export interface CheckpointRow {
  treeSize: number;
  rootHash: Buffer;
  createdDate: Date;
  note: string;
}

const COLUMNS = `"TreeSize"::float8 AS "treeSize", "RootHash" AS "rootHash", "CreatedDate" AS "createdDate", "Note" AS "note"`;

/** Every statement on AuditCheckpoint (written by the sealer only; one row per tree size). */
@Injectable()
export class AuditCheckpointRepository {
  constructor(@InjectRepository(AuditCheckpoint) private readonly repository: Repository<AuditCheckpoint>) {}

  /**
   * Writes a checkpoint. `ifAbsent`: the size-0 checkpoint of the first start, which two nodes may
   * write at once: the second finds it there and writes nothing (no UPDATE: the table refuses them).
   * Returns whether this call wrote it.
   */
  async insert(row: CheckpointRow, tx?: EntityManager, ifAbsent = false): Promise<boolean> {
    const written = (await (tx ?? this.repository.manager).query(
      `INSERT INTO "AuditCheckpoint" ("TreeSize", "RootHash", "CreatedDate", "Note") VALUES ($1, $2, $3, $4)
       ${ifAbsent ? 'ON CONFLICT ("TreeSize") DO NOTHING' : ''} RETURNING 1`,
      [row.treeSize, row.rootHash, row.createdDate, row.note],
    )) as unknown[];
    return written.length > 0;
  }

  async latest(tx?: EntityManager): Promise<CheckpointRow | null> {
    const [row] = (await (tx ?? this.repository.manager).query(`SELECT ${COLUMNS} FROM "AuditCheckpoint" ORDER BY "TreeSize" DESC LIMIT 1`)) as CheckpointRow[];
    return row ?? null;
  }

  async bySize(treeSize: number): Promise<CheckpointRow | null> {
    const [row] = (await this.repository.query(`SELECT ${COLUMNS} FROM "AuditCheckpoint" WHERE "TreeSize" = $1`, [treeSize])) as CheckpointRow[];
    return row ?? null;
  }

  /** Checkpoints with TreeSize ≥ from, oldest first, at most `limit`. */
  async from(from: number, limit: number): Promise<CheckpointRow[]> {
    return (await this.repository.query(`SELECT ${COLUMNS} FROM "AuditCheckpoint" WHERE "TreeSize" >= $1 ORDER BY "TreeSize" LIMIT $2`, [
      from,
      limit,
    ])) as CheckpointRow[];
  }

  /**
   * For leaves first ≤ index < end: the checkpoints that first covered them, oldest first (each leaf's
   * is the smallest TreeSize above its index). The sinks' events carry it (contract 19).
   */
  async covering(first: number, end: number): Promise<{ treeSize: number; rootHash: Buffer }[]> {
    return (await this.repository.query(
      `SELECT "TreeSize"::float8 AS "treeSize", "RootHash" AS "rootHash" FROM "AuditCheckpoint"
        WHERE "TreeSize" > $1 AND "TreeSize" <= (SELECT min("TreeSize") FROM "AuditCheckpoint" WHERE "TreeSize" >= $2) ORDER BY "TreeSize"`,
      [first, end],
    )) as { treeSize: number; rootHash: Buffer }[];
  }
}
