import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { PgErrorCode, pgErrorCode } from '../common/errors';
import { SEALED_TABLES, SealedTableName, canonicalTimestampSql, LEAF_DATE_COLUMN } from '../audit-log/canonical';
import { canonicalSql, sealableSql } from '../audit-log/audited-rows.repository';

/** How long a committed row may wait to be sealed before it counts as outside the log (contract 18). */
export const OUTSIDE_WAIT_SECONDS = 60;
/** Most rows the check names (contract 18). */
export const OUTSIDE_PAGE = 1000;

export interface OutsideRow {
  table: SealedTableName;
  rowId: string;
  createdDate: string | null;
  canonical: string;
  reason: 'not-in-log' | 'waiting';
}

/**
 * The rows of one sealed table outside the log, exactly, within one Id range [$2, $3] (inclusive): neither a leaf
 * (a leaf of the same Id and date: the primary key is (Id, CreatedDate), so a second row under a sealed
 * row's Id with another date is outside) nor waiting. Run only on a narrow range whose summaries
 * differ (below), so it reads few index entries however large the table; a plain SELECT, no lock but a
 * reader's. $1 the table's name. The count and the oldest OUTSIDE_PAGE only.
 */
function exactSql(table: SealedTableName): string {
  const date = `t."${LEAF_DATE_COLUMN[table]}"`;
  return `WITH found AS (
      SELECT t."Id", ${date} AS "date"
        FROM "${table}" t
       WHERE t."Id" BETWEEN $2 AND $3
         AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = $1 AND l."RowId" = t."Id" AND l."RowCreatedDate" = ${date})
         -- Waiting covers a row only while its Id has no leaf, as in the summaries: an entry enqueued
         -- beside a second row under a sealed row's Id (by hand) must not hide that row.
         AND NOT EXISTS (SELECT 1 FROM "AuditPending" p WHERE p."TableName" = $1 AND p."RowId" = t."Id"
                            AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" x WHERE x."TableName" = $1 AND x."RowId" = t."Id")))
    SELECT (SELECT count(*) FROM found)::float8 AS "total", f."Id"::text AS "rowId", ${canonicalTimestampSql('f."date"')} AS "createdDate"
      FROM found f ORDER BY f."date" NULLS FIRST, f."Id" LIMIT ${OUTSIDE_PAGE}`;
}

/**
 * Stray leaves: AuditLeaf rows outside the signed tree (LeafIndex below 0, or at or above the latest
 * checkpoint's TreeSize). The sealer writes each leaf with the checkpoint that signs it, in one
 * transaction, so in one snapshot there are none; but INSERT is not refused on AuditLeaf (the
 * append-only trigger refuses UPDATE, DELETE and TRUNCATE), so a table owner can add a leaf the
 * verifier never reads (it reads leaves 0 to the checkpoint's size) whose (TableName, RowId) covers a
 * row in the summaries and in the exact check, and makes the sealer skip that row as "sealed
 * already". Such a leaf covers nothing. Two ranges of AuditLeaf's primary key (one statement, one
 * snapshot), empty unless someone wrote there by hand; at most STRAY_LIMIT read.
 */
const STRAY_LIMIT = 10_000;
const STRAY_SQL = `WITH size AS MATERIALIZED (SELECT coalesce(max(c."TreeSize"), 0) AS "n" FROM "AuditCheckpoint" c)
  (SELECT l."TableName" AS "table", l."RowId"::text AS "rowId" FROM "AuditLeaf" l WHERE l."LeafIndex" < 0 ORDER BY l."LeafIndex" LIMIT ${STRAY_LIMIT})
  UNION ALL
  (SELECT l."TableName", l."RowId"::text FROM "AuditLeaf" l WHERE l."LeafIndex" >= (SELECT "n" FROM size) ORDER BY l."LeafIndex" LIMIT ${STRAY_LIMIT})`;

/**
 * Tables inheriting from $1 that are not its partitions (pg_inherits: normally none; a partitioned
 * table cannot have any). A table owner may make one (`CREATE TABLE x () INHERITS ("AuditLeaf")`):
 * its rows are read as the parent's, but the parent's primary key, unique keys and triggers do not see
 * them. A child's name as regclass text, quoted where needed, for the statements below.
 */
const CHILDREN_SQL = `SELECT i.inhrelid::regclass::text AS "child" FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
  WHERE i.inhparent = $1::regclass AND NOT c.relispartition ORDER BY 1`;

/**
 * Rows of one sealed table by Id and date, read from `from` (the table itself, or a table inheriting
 * from it) where `where` holds: every row under the Ids of its stray leaves ($1), whatever its date
 * (none of them is in the log: the Id's only leaf is stray, and AuditLeaf is unique on (TableName,
 * RowId)), or every row of a child.
 */
const rowsSql = (table: SealedTableName, from: string, where: string) =>
  `SELECT t."Id"::text AS "rowId", ${canonicalTimestampSql(`t."${LEAF_DATE_COLUMN[table]}"`)} AS "createdDate" FROM ${from} t ${where}`;

/**
 * The rows of one sealed table waiting longer than OUTSIDE_WAIT_SECONDS (no leaf yet, entry old).
 * AuditPending holds only what waits, so this reads little; the summaries count a waiting row as
 * covered, and this names those that waited too long.
 */
function waitingSql(table: SealedTableName): string {
  const date = `t."${LEAF_DATE_COLUMN[table]}"`;
  return `WITH found AS (
      SELECT t."Id", ${date} AS "date"
        FROM "AuditPending" p JOIN "${table}" t ON t."Id" = p."RowId"
       -- An entry dated ahead of the database's clock by more than the wait was not written by the
       -- trigger (its default is now(), the transaction's start): dated by hand so as never to age.
       WHERE p."TableName" = $1
         AND (p."EnqueuedDate" < now() - make_interval(secs => ${OUTSIDE_WAIT_SECONDS}) OR p."EnqueuedDate" > now() + make_interval(secs => ${OUTSIDE_WAIT_SECONDS}))
         AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = $1 AND l."RowId" = t."Id"))
    SELECT (SELECT count(*) FROM found)::float8 AS "total", f."Id"::text AS "rowId", ${canonicalTimestampSql('f."date"')} AS "createdDate"
      FROM found f ORDER BY f."date" NULLS FIRST, f."Id" LIMIT ${OUTSIDE_PAGE}`;
}

/**
 * Summaries of one Id range [$2, $3] (inclusive) of one sealed table, both sides in one statement (one
 * snapshot, so a row committed meanwhile is on both sides or neither): the rows' count and the sum of
 * a keyed hash of their Ids ($4, a seed drawn at start and held in memory only), read index-only from
 * the table's primary key (Id, CreatedDate); and the same of what covers them: the table's leaves
 * with LeafIndex above $5 (all of them with $5 = -1, index-only on AuditLeaf's unique (TableName,
 * RowId); otherwise only the leaves sealed since the summary kept for the range, by AuditLeaf's
 * primary key), and the waiting entries that have no leaf yet; and the highest LeafIndex the snapshot
 * sees. Equal summaries: no row of the range is outside the log (docs/decisions/0031-admin-changes.md
 * says why, and what the verifier catches instead). $1 the table's name.
 */
export function summarySql(table: SealedTableName, sinceLeaf: boolean): string {
  const hashed = (column: string) => `count(*)::text AS "n", coalesce(sum(hashint8extended(${column}, $4::bigint)), 0)::text AS "h"`;
  const leaves = sinceLeaf
    ? `WITH fresh AS MATERIALIZED (SELECT l."TableName", l."RowId" FROM "AuditLeaf" l WHERE l."LeafIndex" > $5::bigint)
       SELECT ${hashed('f."RowId"')} FROM fresh f WHERE f."TableName" = $1 AND f."RowId" BETWEEN $2 AND $3`
    : `SELECT ${hashed('l."RowId"')} FROM "AuditLeaf" l WHERE l."TableName" = $1 AND l."RowId" BETWEEN $2 AND $3 AND $5::bigint = -1`;
  return `SELECT r."n" AS "rowsN", r."h" AS "rowsH", l."n" AS "leavesN", l."h" AS "leavesH", p."n" AS "waitingN", p."h" AS "waitingH",
         (SELECT coalesce(max("LeafIndex"), -1)::text FROM "AuditLeaf") AS "leafIndex"
    FROM (SELECT ${hashed('t."Id"')} FROM "${table}" t WHERE t."Id" BETWEEN $2 AND $3) r,
         (${leaves}) l,
         (SELECT ${hashed('p."RowId"')} FROM "AuditPending" p
           WHERE p."TableName" = $1 AND p."RowId" BETWEEN $2 AND $3
             AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" x WHERE x."TableName" = $1 AND x."RowId" = p."RowId")) p`;
}

interface Summary {
  rowsN: string;
  rowsH: string;
  leavesN: string;
  leavesH: string;
  waitingN: string;
  waitingH: string;
  leafIndex: string;
}

/** A first-level range's leaf summary as of a LeafIndex: leaves are only appended, in LeafIndex order (one sealer at a time). */
interface KeptLeaves {
  n: bigint;
  h: bigint;
  leafIndex: string;
}

/** Most first-level ranges whose leaf summaries are kept (10 per table at 10M rows; an adversary's sparse Ids make more). */
const KEPT_RANGES = 10_000;

/** The lowest Id of one sealed table at or above $1 (one probe of each partition's primary key). */
const nextIdSql = (table: SealedTableName) => `SELECT min(t."Id")::text AS "next" FROM "${table}" t WHERE t."Id" >= $1`;

const MIN_ID = -(2n ** 63n);
const MAX_ID = 2n ** 63n - 1n;

/** Ids per range of the first summaries: each such statement reads about this many index entries a side. */
export const OUTSIDE_SLICE_IDS = 1_000_000n;
/** A range this narrow (or narrower) is checked exactly instead of split again. */
export const OUTSIDE_EXACT_IDS = 256n;
/** Ranges a differing one is split into. */
export const OUTSIDE_FAN_OUT = 16n;

/** The check ran out of its time. */
export class OutsideDeadlineError extends Error {
  constructor(readonly deadlineMs: number) {
    super(`the check for rows outside the log did not finish within ${deadlineMs} ms`);
  }
}

interface Found {
  table: SealedTableName;
  rowId: string;
  /** Canonical text (UTC, six fractional digits): its order is the dates' order. */
  createdDate: string | null;
  reason: OutsideRow['reason'];
}

/** Oldest first (no date first), then by Id: the order of contract 18. */
function oldestFirst(a: Found, b: Found): number {
  if (a.createdDate !== b.createdDate) {
    if (a.createdDate === null) return -1;
    if (b.createdDate === null) return 1;
    return a.createdDate < b.createdDate ? -1 : 1;
  }
  const x = BigInt(a.rowId);
  const y = BigInt(b.rowId);
  return x < y ? -1 : x > y ? 1 : 0;
}

const CANONICAL_SQL = Object.fromEntries(
  SEALED_TABLES.map((table) => [
    table,
    `SELECT t."Id"::text AS "rowId", ${canonicalSql(table, 't')} AS "canonical", ${canonicalTimestampSql(`t."${LEAF_DATE_COLUMN[table]}"`)} AS "createdDate"
       FROM "${table}" t WHERE t."Id" = ANY($1::bigint[])`,
  ]),
) as Record<SealedTableName, string>;

/** The check for rows outside the log (contract 18), and the entries that bring them in. */
@Injectable()
export class AuditOutsideRepository {
  /** The hash key of the summaries: drawn at start, never logged or stored, so no one can choose Ids whose hashes balance. */
  private readonly seed = randomBytes(8).readBigInt64BE().toString();
  /** Leaf summaries of first-level ranges ("table:first:last"), so a check reads only the leaves sealed since. */
  private readonly kept = new Map<string, KeptLeaves>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * How many rows are outside the log, and the oldest OUTSIDE_PAGE of them with their canonical forms.
   * Summaries first, detail only where they differ: per table, Id ranges of OUTSIDE_SLICE_IDS compared
   * by count and keyed hash sum; a range that differs is split OUTSIDE_FAN_OUT ways until
   * OUTSIDE_EXACT_IDS wide, then checked exactly. Every statement is a plain SELECT over one range
   * (each within the pool's own statement deadline; one that misses it is split and tried again), and
   * the whole check stops with OutsideDeadlineError once `deadlineMs` has passed.
   */
  async find(deadlineMs: number): Promise<{ total: number; rows: OutsideRow[] }> {
    const until = Date.now() + deadlineMs;
    const found: Found[] = [];
    let total = 0;
    const keep = (table: SealedTableName, reason: OutsideRow['reason'], rows: { total: number; rowId: string; createdDate: string | null }[]) => {
      total += rows[0]?.total ?? 0;
      for (const r of rows) found.push({ table, rowId: r.rowId, createdDate: r.createdDate, reason });
    };
    const inTime = () => {
      if (Date.now() > until) throw new OutsideDeadlineError(deadlineMs);
    };
    for (const table of SEALED_TABLES) {
      inTime();
      keep(table, 'waiting', await this.dataSource.query(waitingSql(table), [table]));
      // First-level ranges start at an existing Id: Ids nobody used (a row slipped in far above or
      // below the others) cost one index probe, not one range per million unused Ids.
      for (let start = await this.nextId(table, MIN_ID); start !== null; ) {
        const last = start > MAX_ID - OUTSIDE_SLICE_IDS ? MAX_ID : start + OUTSIDE_SLICE_IDS - 1n;
        await this.checkRange(table, start, last, inTime, (reason, rows) => keep(table, reason, rows));
        start = last === MAX_ID ? null : await this.nextId(table, last + 1n);
      }
    }
    inTime();
    await this.strayCovered((table, rows) => {
      const seen = new Set(found.filter((f) => f.table === table).map((f) => `${f.rowId}:${f.createdDate}`));
      const fresh = rows.filter((r) => !seen.has(`${r.rowId}:${r.createdDate}`));
      total += fresh.length;
      for (const r of fresh) found.push({ table, rowId: r.rowId, createdDate: r.createdDate, reason: 'not-in-log' });
    });
    found.sort(oldestFirst);
    const page = found.slice(0, OUTSIDE_PAGE);
    const details = new Map<string, { canonical: string; createdDate: string | null }>();
    for (const table of SEALED_TABLES) {
      const ids = page.filter((r) => r.table === table).map((r) => r.rowId);
      if (ids.length === 0) continue;
      for (const row of (await this.dataSource.query(CANONICAL_SQL[table], [ids])) as { rowId: string; canonical: string; createdDate: string | null }[]) {
        details.set(`${table}:${row.rowId}:${row.createdDate}`, row);
      }
    }
    return {
      total,
      rows: page.map((r) => {
        // A second row under one Id (another date) is told apart by its date.
        const detail = details.get(`${r.table}:${r.rowId}:${r.createdDate}`);
        return { table: r.table, rowId: r.rowId, createdDate: r.createdDate, canonical: detail?.canonical ?? '', reason: r.reason };
      }),
    };
  }


  /**
   * The rows under the Ids of stray leaves (STRAY_SQL, and every leaf stored in a table inheriting from
   * AuditLeaf), and every row stored in a table inheriting from a sealed table (a second copy of a
   * sealed row there is invisible to the summaries and to the exact check, which match it to the
   * real row's leaf), per table: outside the log whatever the summaries said.
   */
  private async strayCovered(keep: (table: SealedTableName, rows: { rowId: string; createdDate: string | null }[]) => void): Promise<void> {
    const stray = (await this.dataSource.query(STRAY_SQL)) as { table: string; rowId: string }[];
    for (const { child } of (await this.dataSource.query(CHILDREN_SQL, ['"AuditLeaf"'])) as { child: string }[]) {
      stray.push(...((await this.dataSource.query(`SELECT "TableName" AS "table", "RowId"::text AS "rowId" FROM ${child} LIMIT ${STRAY_LIMIT}`)) as { table: string; rowId: string }[]));
    }
    for (const table of SEALED_TABLES) {
      for (const { child } of (await this.dataSource.query(CHILDREN_SQL, [`"${table}"`])) as { child: string }[]) {
        keep(table, (await this.dataSource.query(rowsSql(table, child, `LIMIT ${OUTSIDE_PAGE}`))) as { rowId: string; createdDate: string | null }[]);
      }
    }
    for (const table of SEALED_TABLES) {
      const ids = [...new Set(stray.filter((s) => s.table === table).map((s) => s.rowId))];
      if (ids.length === 0) continue;
      const rows = (await this.dataSource.query(rowsSql(table, `"${table}"`, `WHERE t."Id" = ANY($1::bigint[])`), [ids])) as { rowId: string; createdDate: string | null }[];
      keep(table, rows);
    }
  }

  /** The lowest Id of `table` at or above `from`, or null (one probe of each partition's primary key). */
  private async nextId(table: SealedTableName, from: bigint): Promise<bigint | null> {
    const [{ next }] = (await this.dataSource.query(nextIdSql(table), [from.toString()])) as { next: string | null }[];
    return next === null ? null : BigInt(next);
  }

  /** Checks Ids [first, last] of `table`: summaries, split where they differ, exact on narrow ranges. */
  private async checkRange(
    table: SealedTableName,
    first: bigint,
    last: bigint,
    inTime: () => void,
    keep: (reason: OutsideRow['reason'], rows: { total: number; rowId: string; createdDate: string | null }[]) => void,
  ): Promise<void> {
    // Inclusive ranges: the last one may end at the largest bigint.
    const ranges: [bigint, bigint][] = [[first, last]];
    while (ranges.length > 0) {
      inTime();
      const [from, to] = ranges.shift()!;
      const width = to - from + 1n;
      if (width <= OUTSIDE_EXACT_IDS) {
        keep('not-in-log', await this.dataSource.query(exactSql(table), [table, from.toString(), to.toString()]));
        continue;
      }
      let differs: boolean;
      try {
        differs = await this.summariesDiffer(table, from, to, from === first && to === last);
      } catch (error) {
        // A range too large for one statement's deadline on a loaded server: smaller ranges instead.
        if (pgErrorCode(error) !== PgErrorCode.QueryCanceled) throw error;
        differs = true;
      }
      if (!differs) continue;
      const step = (width + OUTSIDE_FAN_OUT - 1n) / OUTSIDE_FAN_OUT;
      const parts: [bigint, bigint][] = [];
      for (let a = from; a <= to; a += step) parts.push([a, a + step - 1n < to ? a + step - 1n : to]);
      ranges.unshift(...parts);
    }
  }

  /**
   * Whether the summaries of [from, to] differ. A first-level range (`keep`) keeps its leaf summary
   * between checks and reads only the leaves sealed since; narrower ranges read theirs whole.
   */
  private async summariesDiffer(table: SealedTableName, from: bigint, to: bigint, keep: boolean): Promise<boolean> {
    const key = `${table}:${from}:${to}`;
    const before = keep ? this.kept.get(key) : undefined;
    const [s] = (await this.dataSource.query(summarySql(table, before !== undefined), [table, from.toString(), to.toString(), this.seed, before?.leafIndex ?? '-1'])) as Summary[];
    const leaves = { n: BigInt(s.leavesN) + (before?.n ?? 0n), h: BigInt(s.leavesH) + (before?.h ?? 0n), leafIndex: s.leafIndex };
    if (keep) {
      if (this.kept.size >= KEPT_RANGES && !this.kept.has(key)) this.kept.clear();
      this.kept.set(key, leaves);
    }
    return BigInt(s.rowsN) !== leaves.n + BigInt(s.waitingN) || BigInt(s.rowsH) !== leaves.h + BigInt(s.waitingH);
  }

  /**
   * Of `ids`, those of rows of `table` that exist, have no leaf, can be sealed (sealableSql: a date the
   * canonical form can hold; else the sealer would take the entry and seal nothing) and are stored in
   * the table itself: the rows an adoption may seal.
   */
  async unsealed(table: SealedTableName, ids: string[], tx: EntityManager): Promise<string[]> {
    const rows = (await tx.query(
      `SELECT DISTINCT t."Id"::text AS "id" FROM "${table}" t
        WHERE t."Id" = ANY($1::bigint[]) AND NOT EXISTS (SELECT 1 FROM "AuditLeaf" l WHERE l."TableName" = $2 AND l."RowId" = t."Id")
          AND ${sealableSql(table, 't')}
          -- Stored in the table or one of its partitions, not in a table inheriting from it (CHILDREN_SQL):
          -- a row there stays outside the log whatever is sealed.
          AND (SELECT c.relispartition OR c.oid = '"${table}"'::regclass FROM pg_class c WHERE c.oid = t.tableoid)`,
      [ids, table],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * Of `ids`, those under which a row of `table` exists whose Id has a leaf of another row (another
   * date: a second row under a sealed row's Id) or a stray leaf (outside the signed tree, or stored in
   * a table inheriting from AuditLeaf): rows that
   * are outside the log but can never be adopted, since AuditLeaf holds one leaf per (TableName, RowId).
   */
  async underAnotherLeaf(table: SealedTableName, ids: string[], tx: EntityManager): Promise<string[]> {
    const date = `t."${LEAF_DATE_COLUMN[table]}"`;
    const rows = (await tx.query(
      `SELECT DISTINCT t."Id"::text AS "id" FROM "${table}" t JOIN "AuditLeaf" l ON l."TableName" = $2 AND l."RowId" = t."Id"
        WHERE t."Id" = ANY($1::bigint[])
          AND (l."RowCreatedDate" IS DISTINCT FROM ${date} OR l."LeafIndex" < 0 OR l."LeafIndex" >= (SELECT coalesce(max(c."TreeSize"), 0) FROM "AuditCheckpoint" c)
               OR l.tableoid <> '"AuditLeaf"'::regclass)`,
      [ids, table],
    )) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /**
   * Of `ids`, those under which `table` holds more than one row (another date: the partitioned primary
   * key is (Id, CreatedDate)). The sealer seals one row per waiting entry, and which of two it would
   * take is chance: such Ids are not adopted.
   */
  async sharedIds(table: SealedTableName, ids: string[], tx: EntityManager): Promise<string[]> {
    const rows = (await tx.query(`SELECT t."Id"::text AS "id" FROM "${table}" t WHERE t."Id" = ANY($1::bigint[]) GROUP BY t."Id" HAVING count(*) > 1`, [ids])) as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** Queues rows for the sealer (what the table's AFTER INSERT trigger would have done); one already waiting stays as it is. */
  async enqueue(table: SealedTableName, ids: string[], tx: EntityManager): Promise<void> {
    await tx.query(
      `INSERT INTO "AuditPending" ("TableName", "RowId") SELECT $1, id FROM unnest($2::bigint[]) AS id ORDER BY id ON CONFLICT ("TableName", "RowId") DO NOTHING`,
      [table, ids],
    );
  }
}
