import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AUDIT_COLUMNS, SEALED_TABLES, AuditRowText, SealedTableName, CANONICAL_TIMESTAMP, canonicalTimestampSql, LEAF_DATE_COLUMN } from './canonical';

/** The length of every text CANONICAL_TIMESTAMP matches (2026-11-25T19:19:32.123456Z), in bytes as in characters. */
export const CANONICAL_TIMESTAMP_LENGTH = '2026-11-25T19:19:32.123456Z'.length;
if (!CANONICAL_TIMESTAMP.test('2026-11-25T19:19:32.123456Z')) throw new Error('CANONICAL_TIMESTAMP_LENGTH is not measured on a canonical timestamp');

/**
 * The SELECT list of a table's canonical columns as text, built once from AUDIT_COLUMNS (never from
 * input): dates in canonical microsecond text (a JS Date would lose the microseconds), numbers as
 * decimal text, booleans as booleans, texts as stored.
 */
function selectList(table: SealedTableName): string {
  return AUDIT_COLUMNS[table]
    .map(({ name, kind }) => {
      const column = `t."${name}"`;
      if (kind === 'date') return `${canonicalTimestampSql(column)} AS "${name}"`;
      if (kind === 'bool') return `${column} AS "${name}"`;
      return `${column}::text AS "${name}"`;
    })
    .join(', ');
}

const SELECTS = Object.fromEntries(
  (Object.keys(AUDIT_COLUMNS) as SealedTableName[]).map((table) => [
    table,
    `SELECT ${selectList(table)} FROM "${table}" t WHERE t."Id" = ANY($1::bigint[])`,
  ]),
) as Record<SealedTableName, string>;

/**
 * The canonical form of a row of `table` (aliased `alias`) as a SQL text expression, byte for byte
 * what canonicalRow() writes from the row read by byIds (contract 15), so the sealer can hash rows
 * where they are instead of shipping every column to the service and back (docs/decisions/0019).
 * Built from AUDIT_COLUMNS only, never from input. Each piece:
 * - id: `"` + id::text + `"`: the decimal digits (and a minus sign), which JSON never escapes;
 * - date: `"` + the canonical to_char text + `"`, `null` for NULL (and for ±infinity, which to_char
 *   turns into NULL, as canonicalRow gets it from byIds). to_char's pattern writes only digits, `-`,
 *   `:`, `.`, `T` and `Z`, which JSON never escapes either;
 * - int: the decimal text (every digit of a bigint), bool: `true` / `false` (boolean::text);
 * - text: to_json(text), PostgreSQL's escape_json: `\"`, `\\`, `\b \f \n \r \t`, other characters below
 *   U+0020 as `\u00xx` in lower-case hex, everything else as is: exactly JSON.stringify on a valid
 *   string (a PostgreSQL text holds no NUL and no lone surrogate). test/audit-canonical-sql.e2e-spec.ts
 *   holds the two to the same bytes over hostile strings, on PostgreSQL and on PGlite.
 * No spaces (json_build_array would write `, `). The id and dates were once to_json too: each call
 * looks its argument's type up in the catalog and goes through json's text output and input again,
 * ~0.3 µs a value, for text it can never change (issue 29, bench/RESULTS.md). Adjacent literals are
 * written as one, so the text is built with fewer concatenations.
 */
export function canonicalSql(table: SealedTableName, alias: string, dateText: DateText = renderDate(alias)): string {
  // Literal text and SQL expressions in order; consecutive literals are merged into one.
  const pieces: { literal: boolean; text: string }[] = [];
  const literal = (text: string) => {
    const last = pieces[pieces.length - 1];
    if (last?.literal) last.text += text;
    else pieces.push({ literal: true, text });
  };
  const sql = (text: string) => pieces.push({ literal: false, text });
  literal(`[${JSON.stringify(table)}`);
  for (const { name, kind } of AUDIT_COLUMNS[table]) {
    literal(',');
    const column = `${alias}."${name}"`;
    if (kind === 'id') {
      literal('"');
      sql(`${column}::text`);
      literal('"');
    } else if (kind === 'date') sql(`COALESCE('"' || ${dateText(name)} || '"', 'null')`);
    else if (kind === 'text') sql(`COALESCE(to_json(${column}::text)::text, 'null')`);
    else sql(`COALESCE(${column}::text, 'null')`);
  }
  literal(']');
  return pieces.map(({ literal: isLiteral, text }) => (isLiteral ? `'${text.replace(/'/g, "''")}'` : text)).join(' || ');
}

/**
 * The canonical text of a date column, by name: to_char on the column itself (renderDate), or a
 * column that already holds it (datesRendered), so a statement formats each date once.
 */
export type DateText = (name: string) => string;
export const renderDate = (alias: string): DateText => (name) => canonicalTimestampSql(`${alias}."${name}"`);
/** The select list that renders every date column of `table` once, as `"@<name>"` (read by readRenderedDate). */
export const datesRendered = (table: SealedTableName, alias: string): string =>
  AUDIT_COLUMNS[table]
    .filter(({ kind }) => kind === 'date')
    .map(({ name }) => `${canonicalTimestampSql(`${alias}."${name}"`)} AS "@${name}"`)
    .join(', ');
export const readRenderedDate = (alias: string): DateText => (name) => `${alias}."@${name}"`;

/** The leaf date of a row (CreatedDate, RunDate) as canonical text, NULL for ±infinity. */
export function leafDateSql(table: SealedTableName, alias: string, dateText: DateText = renderDate(alias)): string {
  return dateText(LEAF_DATE_COLUMN[table]);
}

/**
 * True when canonicalRow and leafRecord accept the row (the checks they make that a stored row can
 * fail): an Id ≥ 0, a leaf date, and every date inside years 0000-9999. A date's text here is always
 * canonicalTimestampSql's to_char, which writes every field but the year in its fixed width of
 * digits and the year in four digits up to 9999 (BC years as their number, as in 0044), five or more
 * after, and NULL for ±infinity: on that text CANONICAL_TIMESTAMP matches exactly when it has
 * CANONICAL_TIMESTAMP_LENGTH bytes. So the length is checked, not the regular expression, which cost
 * the sealer ~5 µs a row, a third of its statement (issue 29, bench/RESULTS.md).
 * test/audit-canonical-sql.e2e-spec.ts holds the two sides to the same refusals over dates at and
 * past every edge.
 */
export function sealableSql(table: SealedTableName, alias: string, dateText: DateText = renderDate(alias)): string {
  const shaped = (text: string) => `octet_length(${text}) = ${CANONICAL_TIMESTAMP_LENGTH}`;
  const checks = [`${alias}."Id" >= 0`, shaped(leafDateSql(table, alias, dateText))];
  for (const { name, kind } of AUDIT_COLUMNS[table]) {
    if (kind !== 'date' || name === LEAF_DATE_COLUMN[table]) continue;
    checks.push(`(${dateText(name)} IS NULL OR ${shaped(dateText(name))})`);
  }
  return `COALESCE(${checks.join(' AND ')}, false)`;
}

/** A leaf with its row, as leavesWithRows reads it: the row's columns (no dates, no Id) beside the leaf's. */
export interface LeafWithRow {
  leafIndex: number;
  table: string;
  rowId: string;
  /** The leaf record's date, canonical text. */
  rowDate: string;
  /** Standard base64 (32 bytes: one line, encode() wraps only after 76 characters). */
  rowHash: string;
  leafHash: string;
  /** Whether the row is still there (retention drops it). */
  found: boolean | null;
  /** Its canonical form, built by canonicalSql (null when gone, or not sealable as canonicalRow would refuse it). */
  canonical: string | null;
  /** The row's other columns, every audited table's under its own name (null where that table has none). */
  [column: string]: string | number | boolean | null;
}

/**
 * The row columns leavesWithRows returns (every table's, by name, except Id and dates): booleans as
 * booleans, the rest as text, as byIds reads them. A name two tables use with different kinds would
 * make the union ambiguous: refused at start.
 */
const ROW_COLUMNS: ReadonlyArray<{ name: string; bool: boolean }> = (() => {
  const kinds = new Map<string, boolean>();
  for (const table of SEALED_TABLES)
    for (const { name, kind } of AUDIT_COLUMNS[table]) {
      if (kind === 'id' || kind === 'date') continue;
      if (kinds.has(name) && kinds.get(name) !== (kind === 'bool')) throw new Error(`audit column ${name}: bool in one table, not in another`);
      kinds.set(name, kind === 'bool');
    }
  return [...kinds].map(([name, bool]) => ({ name, bool }));
})();

/**
 * Leaves $1 ≤ index < $2, each with its row's canonical form (canonicalSql: the sealer's own
 * definition, not a second one) and columns, in one statement: one LATERAL per table, guarded by the
 * leaf's table name, probing the row by its primary key (Id and date, so PostgreSQL prunes the
 * partitions of other months at run time). A batch then costs one round trip and no canonical form is
 * rebuilt in JavaScript (issue 30, bench/RESULTS.md). The row is the one with the leaf's Id and date:
 * a row with the same Id and another date (inserted outside the log) is not the leaf's row, and a leaf
 * whose own row is gone is sent as retention left it (row null, canonical null).
 */
export const LEAVES_WITH_ROWS = (() => {
  const laterals = SEALED_TABLES.map((table, i) => {
    const own = new Map<string, boolean>(AUDIT_COLUMNS[table].map(({ name }) => [name, true]));
    const columns = ROW_COLUMNS.filter(({ name }) => own.has(name)).map(({ name, bool }) => (bool ? `t."${name}"` : `t."${name}"::text AS "${name}"`));
    return `LEFT JOIN LATERAL (
      SELECT true AS "found", CASE WHEN ${sealableSql(table, 't')} THEN ${canonicalSql(table, 't')} END AS "canonical"${columns.map((c) => `, ${c}`).join('')}
        FROM "${table}" t WHERE l."TableName" = '${table}' AND t."Id" = l."RowId" AND t."${LEAF_DATE_COLUMN[table]}" = l."RowCreatedDate"
       LIMIT 1) r${i} ON true`;
  });
  const from = (name: string) => {
    const having = SEALED_TABLES.map((table, i) => (AUDIT_COLUMNS[table].some((c) => c.name === name) ? `r${i}."${name}"` : null)).filter((x) => x !== null);
    return having.length === 1 ? having[0] : `COALESCE(${having.join(', ')})`;
  };
  const all = (name: string) => `COALESCE(${SEALED_TABLES.map((_, i) => `r${i}."${name}"`).join(', ')})`;
  return `SELECT l."LeafIndex"::float8 AS "leafIndex", l."TableName" AS "table", l."RowId"::text AS "rowId",
         ${canonicalTimestampSql('l."RowCreatedDate"')} AS "rowDate",
         encode(l."RowHash", 'base64') AS "rowHash", encode(l."LeafHash", 'base64') AS "leafHash",
         ${all('found')} AS "found", ${all('canonical')} AS "canonical"${ROW_COLUMNS.map(({ name }) => `, ${from(name)} AS "${name}"`).join('')}
    FROM "AuditLeaf" l
    ${laterals.join('\n    ')}
   WHERE l."LeafIndex" >= $1 AND l."LeafIndex" < $2
   ORDER BY l."LeafIndex"`;
})();

/**
 * Reads the sealed tables (UserLogin, UserLogout, AuditRetentionRun) as the canonical form needs
 * them. Rows by Id; where a repeated Id returns two rows (possible once a table is partitioned), every
 * row is returned and the caller decides.
 */
@Injectable()
export class AuditedRowsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async byIds(table: SealedTableName, ids: string[], tx?: EntityManager): Promise<AuditRowText[]> {
    if (ids.length === 0) return [];
    return (await (tx ?? this.dataSource.manager).query(SELECTS[table], [ids])) as AuditRowText[];
  }

  /** Leaves start ≤ index < end with their rows (LEAVES_WITH_ROWS), in order: what a security sink sends. */
  async leavesWithRows(start: number, end: number): Promise<LeafWithRow[]> {
    // Without JIT, as every statement of the service (database.module.ts): once the tables' statistics
    // grew, this one's planned cost passed jit_above_cost and PostgreSQL spent ~2.3 s compiling it for a
    // 7 ms run, per batch (EXPLAIN ANALYZE, bench/RESULTS.md, issue 30).
    return (await this.dataSource.query(LEAVES_WITH_ROWS, [start, end])) as LeafWithRow[];
  }
}
