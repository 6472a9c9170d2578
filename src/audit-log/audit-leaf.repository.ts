import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { SEALED_TABLES, SealedTableName, canonicalTimestampSql, LEAF_DATE_COLUMN } from './canonical';
import { statementName } from '../database/statement-name';
import { AuditLeaf } from './audit-log.entities';
import { canonicalSql, datesRendered, leafDateSql, readRenderedDate, sealableSql } from './audited-rows.repository';

/** A leaf as the routes serve it: the date already in canonical text (microseconds kept). */
export interface LeafRow {
  leafIndex: number;
  tableName: SealedTableName;
  rowId: string;
  rowCreatedDate: string;
  rowHash: Buffer;
  leafHash: Buffer;
}

/** What one sealing statement did (appendFromPending). */
export interface AppendedFromPending {
  /** Pending entries consumed (deleted), whatever became of them. */
  taken: number;
  /** The new leaves' hashes, in LeafIndex order from `first`: 32 bytes each, one buffer (one object, not one per leaf). */
  leafHashes: Buffer;
  /** Entries whose row is gone (or whose table is not sealed): count and the first ten `<table>:<id>`. */
  gone: { count: number; keys: string[] };
  /** Entries of rows that already have a leaf. */
  repeated: { count: number; keys: string[] };
  /** Rows canonicalRow/leafRecord refuse (a negative Id, a date outside years 0000-9999 or infinite). */
  unsealable: { count: number; keys: string[] };
  /** Entries whose Id names two rows of the table (one of them was sealed). */
  doubled: { count: number; keys: string[] };
}

/**
 * The rows of the consumed pending entries, one branch per sealed table: the canonical form, leaf date
 * (text and value) and sealability, computed where the row is (audited-rows.repository.ts); the
 * canonical text is hashed at once, so only its 32-byte hash is carried (and sorted) further. Each date
 * is formatted once in the inner query (OFFSET 0 keeps the planner from folding it back into every use).
 */
const FOUND = SEALED_TABLES.map((table) => {
  const dates = readRenderedDate('s');
  return `SELECT s."Seq", sha256(convert_to(${canonicalSql(table, 's', dates)}, 'UTF8')) AS "rowHash", ${leafDateSql(table, 's', dates)} AS "d", s."${LEAF_DATE_COLUMN[table]}" AS "date",
            ${sealableSql(table, 's', dates)} AS "ok"
       FROM (SELECT p."Seq", t.*, ${datesRendered(table, 't')} FROM taken p JOIN "${table}" t ON t."Id" = p."RowId" WHERE p."TableName" = '${table}' OFFSET 0) s`;
}).join('\n     UNION ALL\n     ');

const keysOf = (condition: string, name: string) =>
  `count(*) FILTER (WHERE ${condition})::int AS "${name}Count",
   COALESCE((array_agg("TableName" || ':' || "RowId"::text ORDER BY "Seq") FILTER (WHERE ${condition}))[1:10], '{}') AS "${name}"`;

/**
 * The sealing statement (docs/decisions/0019): consumes the oldest pending entries and appends their
 * rows as leaves from index $1, all inside PostgreSQL: the canonical form, RowHash = SHA-256(canonical),
 * the leaf record and LeafHash = SHA-256(0x00 || record) (contract 15), so no row travels to the
 * service and back; only the 32-byte leaf hashes come back, as one byte string in LeafIndex order,
 * for the tree. Entries whose row is gone, already sealed or not sealable are consumed without a leaf
 * and reported. $2 batch size, $3 SealedDate.
 */
const appendFromPendingSql = (checkSealed: boolean) => `
  WITH taken AS (
    -- A range of the primary key, not Seq IN (…): one index range instead of a join. The same rows
    -- as the LIMIT, since both read the statement's one snapshot (an entry whose transaction has not
    -- committed is invisible to both and waits for the next seal) and only the sealer deletes here.
    DELETE FROM "AuditPending"
     WHERE "Seq" <= (SELECT max("Seq") FROM (SELECT "Seq" FROM "AuditPending" ORDER BY "Seq" LIMIT $2) oldest)
    RETURNING "Seq", "TableName", "RowId"
  ),
  found AS (
     ${FOUND}
  ),
  one AS (
    SELECT DISTINCT ON ("Seq") *, count(*) OVER (PARTITION BY "Seq") AS "copies" FROM found ORDER BY "Seq"
  ),
  classified AS (
    SELECT p."Seq", p."TableName", p."RowId", o."rowHash", o."d", o."date", o."ok", o."copies",
           ${checkSealed ? ALREADY_SEALED : 'false'} AS "sealed"
      FROM taken p LEFT JOIN one o ON o."Seq" = p."Seq"
  ),
  hashed AS (
    SELECT "TableName", "RowId", "d", "date", "rowHash", row_number() OVER (ORDER BY "Seq") AS "k"
      FROM classified WHERE "rowHash" IS NOT NULL AND NOT "sealed" AND "ok"
  ),
  added AS (
    INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
    SELECT $1::bigint + "k" - 1, "TableName", "RowId", "date", "rowHash",
           sha256(decode('00', 'hex') || convert_to("TableName" || chr(10) || "RowId"::text || chr(10) || "d" || chr(10) || encode("rowHash", 'base64') || chr(10), 'UTF8')),
           $3
      FROM hashed
    RETURNING "LeafIndex", "LeafHash"
  )
  SELECT (SELECT count(*) FROM taken)::int AS "taken",
         (SELECT count(*) FROM added)::int AS "added",
         (SELECT string_agg("LeafHash", ''::bytea ORDER BY "LeafIndex") FROM added) AS "hashes",
         ${keysOf('"rowHash" IS NULL', 'gone')},
         ${keysOf('"rowHash" IS NOT NULL AND "sealed"', 'repeated')},
         ${keysOf('"rowHash" IS NOT NULL AND NOT "sealed" AND NOT "ok"', 'unsealable')},
         ${keysOf('"copies" > 1', 'doubled')}
    FROM classified`;

/**
 * Whether an entry's row already has a leaf (an entry enqueued again, e.g. by a second trigger after a
 * partition attach). A correlated scalar subquery, not EXISTS: the planner may turn EXISTS into a hash
 * of the whole AuditLeaf table, read at every seal (measured: PostgreSQL's CPU per batch grew with the
 * log). One index probe per row, about a tenth of the statement: so the sealer first runs the fast
 * statement (APPEND_FROM_PENDING_FAST_SQL), where the unique (TableName, RowId) refuses a second leaf of
 * a row anyway, and only after a refusal runs the batch again with it (APPEND_FROM_PENDING_CHECKED_SQL).
 */
const ALREADY_SEALED = `(SELECT true FROM "AuditLeaf" l WHERE l."TableName" = p."TableName" AND l."RowId" = p."RowId" LIMIT 1) IS NOT NULL`;

/** Gaps in a table's Ids up to which the fast statement reads the batch's range of them rather than probing each. */
const DENSE_SLACK = 1000;

/**
 * The rows of `table` that the batch's entries without hashes (`unhashed`) name, with the entry's Seq
 * and the dates rendered, for the fast statement. Where those Ids of the table are dense (their range
 * at most twice their count plus DENSE_SLACK, the usual case: Ids and Seq grow together), the range
 * of Ids is read at once through the primary key (whose first column is Id) and hash-joined to the
 * entries: one index range per partition, where a probe per entry descends every partition's index (a
 * table is partitioned by date, not Id). Where they are not (a row committed long after its Id was
 * drawn), each entry probes its row (LATERAL … OFFSET 0 keeps the probe whatever the settings), so a
 * straggler never makes a batch read the table since its Id. The gates read only `bounds`: one-time
 * filters, false for every table when every entry has its hashes. Left joins: an entry whose row is
 * gone still comes out, with NULL columns, so that it cannot be sealed (NOT NULL refuses the batch).
 */
function rowsOfUnhashed(table: SealedTableName): string {
  const bound = (expression: string) => `(SELECT ${expression} FROM bounds WHERE "TableName" = '${table}')`;
  // In numeric: two Ids written by hand at the ends of bigint must not overflow the difference.
  const dense = `"hi"::numeric - "lo" <= 2 * "n" + ${DENSE_SLACK}`;
  return `SELECT p."Seq", t.*, ${datesRendered(table, 't')}
            FROM unhashed p LEFT JOIN "${table}" t ON t."Id" = p."RowId" AND t."Id" BETWEEN ${bound('"lo"')} AND ${bound('"hi"')}
           WHERE p."TableName" = '${table}' AND ${bound(dense)}
          UNION ALL
          SELECT p."Seq", t.*, ${datesRendered(table, 't')}
            FROM unhashed p LEFT JOIN LATERAL (SELECT * FROM "${table}" r WHERE r."Id" = p."RowId" OFFSET 0) t ON true
           WHERE p."TableName" = '${table}' AND ${bound(`NOT (${dense})`)}`;
}

/**
 * The fast sealing statement: the common case, where every entry consumed names one sealable row that
 * has no leaf yet. Such an entry usually carries its row's hashes, written by the enqueue trigger in the
 * inserting transaction (migration PendingHashes, docs/decisions/0039), as a Certificate Transparency
 * log's front end hashes a leaf when it is queued: its row is not read at all. An entry without them
 * (enqueued before that migration, or by an adoption) has its row read by its range of Ids and hashed
 * here, as every row was before (docs/decisions/0036); that branch costs nothing when no entry needs it.
 * What is left to the one node sealing at a time is what only it can do: number the leaves from $1 in
 * Seq order (the order the triggers enqueued the rows, across tables: a sink's reader sees a change
 * before the sign-ins written after it; the one sort, of narrow rows), append them, and return their
 * hashes, unsorted, each beside its index (int8send: 8 bytes big-endian), for the service to place,
 * both as base64 text. A row deleted behind the triggers' back after its insert committed is sealed
 * from the hashes of what was committed, and `npm run audit:verify` then names it as a row missing that
 * no retention run covers (contract 15: every committed row becomes a leaf).
 * Exceptions cannot slip through: a row already sealed, or an Id naming two rows, gives a second leaf of
 * one (TableName, RowId), which AuditLeaf's unique key refuses (23505); a row not sealable gets NULL
 * hashes from the trigger, or no LeafIndex here, and so does an entry without hashes whose row is gone,
 * which the NOT NULLs refuse (23502). Either way the caller rolls the batch back and runs the careful
 * statement (APPEND_FROM_PENDING_SQL), which names them. Every entry consumed is then a leaf. $1 first index, $2 batch size,
 * $3 SealedDate (as in the careful statement).
 */
export const APPEND_FROM_PENDING_FAST_SQL = `
  WITH taken AS (
    -- As in the careful statement (appendFromPendingSql), with a lower bound too: a range the planner
    -- reads through the primary key, where "Seq" <= alone let it scan the whole table (dead entries too).
    DELETE FROM "AuditPending"
     WHERE "Seq" >= (SELECT min("Seq") FROM "AuditPending")
       AND "Seq" <= (SELECT max("Seq") FROM (SELECT "Seq" FROM "AuditPending" ORDER BY "Seq" LIMIT $2) oldest)
    RETURNING "Seq", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash"
  ),
  unhashed AS (
    SELECT "Seq", "TableName", "RowId" FROM taken WHERE "RowHash" IS NULL
  ),
  bounds AS (
    SELECT "TableName", min("RowId") AS "lo", max("RowId") AS "hi", count(*) AS "n" FROM unhashed GROUP BY "TableName"
  ),
  found AS (
    SELECT "Seq", "TableName", "RowId", "RowCreatedDate" AS "date", "RowHash" AS "rowHash", "LeafHash" AS "leafHash", true AS "ok"
      FROM taken WHERE "RowHash" IS NOT NULL
     UNION ALL
     ${SEALED_TABLES.map((table) => {
       const dates = readRenderedDate('s');
       return `SELECT "Seq", '${table}'::varchar, "Id", "date", "rowHash",
            sha256(decode('00', 'hex') || convert_to('${table}' || chr(10) || "Id"::text || chr(10) || "d" || chr(10) || encode("rowHash", 'base64') || chr(10), 'UTF8')),
            "ok"
       FROM (SELECT s."Seq", s."Id", s."${LEAF_DATE_COLUMN[table]}" AS "date", sha256(convert_to(${canonicalSql(table, 's', dates)}, 'UTF8')) AS "rowHash",
                    ${leafDateSql(table, 's', dates)} AS "d", ${sealableSql(table, 's', dates)} AS "ok"
               FROM (${rowsOfUnhashed(table)} OFFSET 0) s OFFSET 0) h`;
     }).join('\n     UNION ALL\n     ')}
  ),
  added AS (
    INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
    -- A row read here that cannot be sealed gets no LeafIndex: the NOT NULL refuses the batch (23502).
    SELECT CASE WHEN "ok" THEN $1::bigint + row_number() OVER (ORDER BY "Seq") - 1 END, "TableName", "RowId", "date", "rowHash", "leafHash", $3
      FROM found
    RETURNING "LeafIndex", "LeafHash"
  )
  -- In base64 (a line break every 76 characters, which Buffer.from skips): a third fewer bytes for the
  -- service to receive and decode than bytea's hex text, 1.6 MB a batch of 20,000.
  SELECT count(*)::int AS "added",
         encode(string_agg("LeafHash", ''::bytea), 'base64') AS "hashes",
         encode(string_agg(int8send("LeafIndex"), ''::bytea), 'base64') AS "indexes"
    FROM added`;

/**
 * The settings the fast statement is planned with, for the rest of its transaction (set_config(…, true)):
 * no nested loop, so that rowsOfUnhashed's range is read once and hash-joined. Planned with the CTE's
 * guess of a few rows per table, the join was 20,000 index probes through every partition
 * (bench/RESULTS.md, issue 29). The careful statement keeps the planner's choice.
 */
export const FAST_SEAL_SETTINGS = `set_config('enable_nestloop', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)`;

/**
 * The name the fast statement is prepared under on a connection. Prepared, its ~15 kB are parsed and
 * planned once per connection instead of once per batch; the plan is generic (plan_cache_mode in
 * FAST_SEAL_SETTINGS): its joins are fixed by enable_nestloop, and its three values change no choice.
 */
const FAST_SEAL_STATEMENT = statementName('tm-seal', APPEND_FROM_PENDING_FAST_SQL);

export const APPEND_FROM_PENDING_SQL = appendFromPendingSql(false);
export const APPEND_FROM_PENDING_CHECKED_SQL = appendFromPendingSql(true);

/**
 * The hashes of a batch in LeafIndex order: `hashes` (32 bytes each) beside `indexes` (8 bytes each,
 * big-endian), every index of [first, first + n) exactly once, or it throws. The statement usually
 * returns them in order already (it inserts in Seq order), and then `hashes` itself is the answer.
 */
export function placeByIndex(hashes: Buffer, indexes: Buffer, first: number): Buffer {
  const n = hashes.length / 32;
  // An index as two 32-bit halves: no BigInt per leaf.
  const at = (i: number) => indexes.readUInt32BE(i * 8) * 2 ** 32 + indexes.readUInt32BE(i * 8 + 4) - first;
  let i = 0;
  while (i < n && at(i) === i) i++;
  if (i === n) return hashes;
  const placed = Buffer.alloc(hashes.length);
  const seen = new Uint8Array(n);
  hashes.copy(placed, 0, 0, i * 32);
  seen.fill(1, 0, i);
  for (; i < n; i++) {
    const k = at(i);
    if (!(k >= 0 && k < n) || seen[k] === 1) throw new Error(`the sealing statement returned leaf index ${k + first} outside [${first}, ${first + n}) or twice`);
    seen[k] = 1;
    hashes.copy(placed, k * 32, i * 32, i * 32 + 32);
  }
  return placed;
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
   * Consumes up to `limit` pending entries, oldest first, and appends their rows as leaves from index
   * `first`, in one statement (APPEND_FROM_PENDING_SQL). Only under the seal lock, in the sealing
   * transaction. Without `checkSealed`, an entry of a row that already has a leaf makes the statement
   * fail (unique violation, 23505): the caller runs the batch again with it.
   */
  async appendFromPending(tx: EntityManager, first: number, limit: number, sealedDate: Date, checkSealed: boolean): Promise<AppendedFromPending> {
    const [row] = (await tx.query(checkSealed ? APPEND_FROM_PENDING_CHECKED_SQL : APPEND_FROM_PENDING_SQL, [first, limit, sealedDate])) as {
      taken: number;
      added: number;
      hashes: Buffer | null;
      [key: string]: unknown;
    }[];
    const leafHashes = row.hashes ?? Buffer.alloc(0);
    if (leafHashes.length !== row.added * 32) throw new Error(`the sealing statement returned ${leafHashes.length} bytes of hashes for ${row.added} leaves`);
    const group = (name: string) => ({ count: row[`${name}Count`] as number, keys: row[name] as string[] });
    return { taken: row.taken, leafHashes, gone: group('gone'), repeated: group('repeated'), unsealable: group('unsealable'), doubled: group('doubled') };
  }

  /** The leaf of one row, or null while it is not sealed. */
  async byRow(tableName: SealedTableName, rowId: string): Promise<LeafRow | null> {
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

  /**
   * The fast path of appendFromPending (APPEND_FROM_PENDING_FAST_SQL): the entries consumed (each one a
   * leaf) and their leaf hashes in LeafIndex order from `first`. Throws a unique violation (23505) for a
   * row already sealed or an Id naming two sealable rows, a not-null violation (23502) for a row not
   * sealable or gone: the caller must then roll the transaction back and run appendFromPending.
   */
  async appendFromPendingFast(tx: EntityManager, first: number, limit: number, sealedDate: Date): Promise<{ taken: number; leafHashes: Buffer }> {
    await tx.query(`SELECT ${FAST_SEAL_SETTINGS}`);
    // On the transaction's own connection, as a statement prepared once per connection: its ~15 kB
    // parsed and planned once (FAST_SEAL_SETTINGS' generic plan), not once per batch.
    const client = (await tx.queryRunner!.connect()) as PoolClient;
    const { rows } = await client.query<{ added: number; hashes: string | null; indexes: string | null }>({
      name: FAST_SEAL_STATEMENT,
      text: APPEND_FROM_PENDING_FAST_SQL,
      values: [first, limit, sealedDate],
    });
    const [row] = rows;
    const hashes = Buffer.from(row.hashes ?? '', 'base64');
    const indexes = Buffer.from(row.indexes ?? '', 'base64');
    if (hashes.length !== row.added * 32 || indexes.length !== row.added * 8) {
      throw new Error(`the sealing statement returned ${hashes.length} bytes of hashes and ${indexes.length} of indexes for ${row.added} leaves`);
    }
    return { taken: row.added, leafHashes: placeByIndex(hashes, indexes, first) };
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
