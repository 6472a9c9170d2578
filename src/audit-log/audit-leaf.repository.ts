import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AuditTableName, canonicalTimestampSql } from './canonical';
import { AuditLeaf } from './audit-log.entities';

/** A leaf as the routes serve it: the date already in canonical text (microseconds kept). */
export interface LeafRow {
  leafIndex: number;
  tableName: AuditTableName;
  rowId: string;
  rowCreatedDate: string;
  rowHash: Buffer;
  leafHash: Buffer;
}

/** A leaf as the sealer appends it. */
export interface NewLeaf {
  tableName: AuditTableName;
  rowId: string;
  /** Canonical timestamp text, so the stored value is exactly the one hashed. */
  rowCreatedDate: string;
  rowHash: Buffer;
  leafHash: Buffer;
}

const LEAF_COLUMNS = `"LeafIndex"::float8 AS "leafIndex", "TableName" AS "tableName", "RowId"::text AS "rowId",
  ${canonicalTimestampSql('RowCreatedDate')} AS "rowCreatedDate", "RowHash" AS "rowHash", "LeafHash" AS "leafHash"`;

/**
 * Every statement on AuditLeaf. Appended only by the sealer, under its lock, from the next index:
 * the table itself says where the log ends (its primary key is the last guard against a gap or a
 * second leaf at one index; the unique (TableName, RowId) against a row sealed twice).
 */
@Injectable()
export class AuditLeafRepository {
  constructor(@InjectRepository(AuditLeaf) private readonly repository: Repository<AuditLeaf>) {}

  /** How many leaves the log has: the next LeafIndex (one backwards step of the primary key). */
  async size(tx?: EntityManager): Promise<number> {
    const [row] = (await (tx ?? this.repository.manager).query(
      `SELECT COALESCE((SELECT "LeafIndex" FROM "AuditLeaf" ORDER BY "LeafIndex" DESC LIMIT 1) + 1, 0)::float8 AS "size"`,
    )) as { size: number }[];
    return row.size;
  }

  /**
   * Appends leaves from index `first` in one statement (unnest of column arrays, see
   * database/bulk-insert.ts): tens of thousands of rows per seal without a statement per row.
   */
  async append(tx: EntityManager, first: number, leaves: NewLeaf[], sealedDate: Date): Promise<void> {
    if (leaves.length === 0) return;
    // The hashes travel as two byte strings of 32-byte slices: a bytea[] of 20,000 elements costs
    // several times more to encode and parse (measured: the append was most of a seal).
    await tx.query(
      `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
       SELECT $1::bigint + n - 1, t, r, d, substring($5::bytea FROM (n - 1)::int * 32 + 1 FOR 32), substring($6::bytea FROM (n - 1)::int * 32 + 1 FOR 32), $7
         FROM unnest($2::varchar[], $3::bigint[], $4::timestamptz[]) WITH ORDINALITY AS u(t, r, d, n)`,
      [
        first,
        leaves.map((l) => l.tableName),
        leaves.map((l) => l.rowId),
        leaves.map((l) => l.rowCreatedDate),
        Buffer.concat(leaves.map((l) => l.rowHash)),
        Buffer.concat(leaves.map((l) => l.leafHash)),
        sealedDate,
      ],
    );
  }

  /** The leaf of one row, or null while it is not sealed. */
  async byRow(tableName: AuditTableName, rowId: string): Promise<LeafRow | null> {
    const [row] = (await this.repository.query(`SELECT ${LEAF_COLUMNS} FROM "AuditLeaf" WHERE "TableName" = $1 AND "RowId" = $2`, [
      tableName,
      rowId,
    ])) as LeafRow[];
    return row ?? null;
  }

  /** Leaves start ≤ index < end, in index order. */
  async range(start: number, end: number): Promise<LeafRow[]> {
    return (await this.repository.query(
      `SELECT ${LEAF_COLUMNS} FROM "AuditLeaf" WHERE "LeafIndex" >= $1 AND "LeafIndex" < $2 ORDER BY "LeafIndex"`,
      [start, end],
    )) as LeafRow[];
  }

  /** The leaf hashes of [start, end), in order (level 0 of the tree). */
  async hashes(start: number, end: number, tx?: EntityManager): Promise<Buffer[]> {
    const rows = (await (tx ?? this.repository.manager).query(
      `SELECT "LeafHash" AS "hash" FROM "AuditLeaf" WHERE "LeafIndex" >= $1 AND "LeafIndex" < $2 ORDER BY "LeafIndex"`,
      [start, end],
    )) as { hash: Buffer }[];
    return rows.map((r) => r.hash);
  }
}
