import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AUDIT_TABLES, AuditTableName, canonicalTimestampSql, LEAF_DATE_COLUMN } from '../audit-log/canonical';
import { canonicalSql } from '../audit-log/audited-rows.repository';

/** How long a committed row may wait to be sealed before it counts as outside the log (contract 18). */
export const OUTSIDE_WAIT_SECONDS = 60;
/** Most rows the check names (contract 18). */
export const OUTSIDE_PAGE = 1000;

export interface OutsideRow {
  table: AuditTableName;
  rowId: string;
  createdDate: string | null;
  canonical: string;
  reason: 'not-in-log' | 'waiting';
}

/**
 * The rows of one sealed table outside the log: neither a leaf nor waiting, or waiting longer than
 * OUTSIDE_WAIT_SECONDS. An anti-join of the table's primary key index (Id, CreatedDate; a merge of its
 * partitions' indexes in Id order) against AuditLeaf's unique (TableName, RowId) index, both read
 * index-only on append-only tables, and AuditPending (small: what waits) by its unique
 * (TableName, RowId): no sort of the table, no lock but a reader's, so inserts go on
 * (docs/decisions/0031-admin-changes.md).
 */
function outsideOf(table: AuditTableName): string {
  return `SELECT '${table}'::text AS "table", t."Id", t."${LEAF_DATE_COLUMN[table]}" AS "date", p."RowId" IS NOT NULL AS "waiting"
      FROM "${table}" t
      LEFT JOIN "AuditPending" p ON p."TableName" = '${table}' AND p."RowId" = t."Id"
     WHERE NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = '${table}' AND l."RowId" = t."Id")
       AND (p."RowId" IS NULL OR p."EnqueuedDate" < now() - make_interval(secs => ${OUTSIDE_WAIT_SECONDS}))`;
}

/** The check's one statement (exported for bench/audit-outside-scale.js, which EXPLAINs it at 10M rows a table). */
export const OUTSIDE_SQL = `
  WITH outside AS MATERIALIZED (${AUDIT_TABLES.map(outsideOf).join('\n    UNION ALL\n    ')})
  SELECT count(*) OVER ()::float8 AS "total", o."table", o."Id"::text AS "rowId", o."waiting"
    FROM outside o ORDER BY o."date" NULLS FIRST, o."Id" LIMIT ${OUTSIDE_PAGE}`;

const CANONICAL_SQL = Object.fromEntries(
  AUDIT_TABLES.map((table) => [
    table,
    `SELECT t."Id"::text AS "rowId", ${canonicalSql(table, 't')} AS "canonical", ${canonicalTimestampSql(`t."${LEAF_DATE_COLUMN[table]}"`)} AS "createdDate"
       FROM "${table}" t WHERE t."Id" = ANY($1::bigint[])`,
  ]),
) as Record<AuditTableName, string>;

/** The check for rows outside the log (contract 18), and the entries that bring them in. */
@Injectable()
export class AuditOutsideRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** How many rows are outside the log, and the oldest OUTSIDE_PAGE of them with their canonical forms. */
  async find(): Promise<{ total: number; rows: OutsideRow[] }> {
    const found = (await this.dataSource.query(OUTSIDE_SQL)) as { total: number; table: AuditTableName; rowId: string; waiting: boolean }[];
    const details = new Map<string, { canonical: string; createdDate: string | null }>();
    for (const table of AUDIT_TABLES) {
      const ids = found.filter((r) => r.table === table).map((r) => r.rowId);
      if (ids.length === 0) continue;
      for (const row of (await this.dataSource.query(CANONICAL_SQL[table], [ids])) as { rowId: string; canonical: string; createdDate: string | null }[]) {
        details.set(`${table}:${row.rowId}`, row);
      }
    }
    return {
      total: found[0]?.total ?? 0,
      rows: found.map((r) => ({
        table: r.table,
        rowId: r.rowId,
        createdDate: details.get(`${r.table}:${r.rowId}`)?.createdDate ?? null,
        canonical: details.get(`${r.table}:${r.rowId}`)?.canonical ?? '',
        reason: r.waiting ? 'waiting' : 'not-in-log',
      })),
    };
  }

  /** Of `ids`, those of rows of `table` that exist and have no leaf (the rows an adoption may seal). */
  async unsealed(table: AuditTableName, ids: string[], tx: EntityManager): Promise<string[]> {
    const rows = (await tx.query(
      `SELECT DISTINCT t."Id"::text AS "id" FROM "${table}" t
        WHERE t."Id" = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = $2 AND l."RowId" = t."Id")`,
      [ids, table],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** Queues rows for the sealer (what the table's AFTER INSERT trigger would have done); one already waiting stays as it is. */
  async enqueue(table: AuditTableName, ids: string[], tx: EntityManager): Promise<void> {
    await tx.query(
      `INSERT INTO "AuditPending" ("TableName", "RowId") SELECT $1, id FROM unnest($2::bigint[]) AS id ORDER BY id ON CONFLICT ("TableName", "RowId") DO NOTHING`,
      [table, ids],
    );
  }
}
