import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { AUDIT_COLUMNS, AuditRowText, SealedTableName, CANONICAL_TIMESTAMP, canonicalTimestampSql, LEAF_DATE_COLUMN } from './canonical';

/** CANONICAL_TIMESTAMP as a PostgreSQL regular expression (the same syntax), passed as a parameter. */
export const CANONICAL_TIMESTAMP_SOURCE = CANONICAL_TIMESTAMP.source;

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
 * - id: `to_json(id::text)`, a JSON string of the decimal digits;
 * - date: to_json of the canonical to_char text, `null` for NULL (and for ±infinity, which to_char
 *   turns into NULL, as canonicalRow gets it from byIds);
 * - int: the decimal text (every digit of a bigint), bool: `true` / `false` (boolean::text);
 * - text: to_json(text), PostgreSQL's escape_json: `\"`, `\\`, `\b \f \n \r \t`, other characters below
 *   U+0020 as `\u00xx` in lower-case hex, everything else as is: exactly JSON.stringify on a valid
 *   string (a PostgreSQL text holds no NUL and no lone surrogate). test/audit-canonical-sql.e2e-spec.ts
 *   holds the two to the same bytes over hostile strings, on PostgreSQL and on PGlite.
 * No spaces (json_build_array would write `, `).
 */
export function canonicalSql(table: SealedTableName, alias: string, dateText: DateText = renderDate(alias)): string {
  const parts = [`'${JSON.stringify(table)}'`];
  for (const { name, kind } of AUDIT_COLUMNS[table]) {
    const column = `${alias}."${name}"`;
    if (kind === 'id') parts.push(`to_json(${column}::text)::text`);
    else if (kind === 'date') parts.push(`COALESCE(to_json(${dateText(name)})::text, 'null')`);
    else if (kind === 'text') parts.push(`COALESCE(to_json(${column}::text)::text, 'null')`);
    else parts.push(`COALESCE(${column}::text, 'null')`);
  }
  return `'[' || ${parts.join(` || ',' || `)} || ']'`;
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
 * fail): an Id ≥ 0, a leaf date, and every date inside years 0000-9999. `pattern` is the SQL
 * parameter holding CANONICAL_TIMESTAMP's source (its syntax is PostgreSQL's too).
 */
export function sealableSql(table: SealedTableName, alias: string, pattern: string, dateText: DateText = renderDate(alias)): string {
  const checks = [`${alias}."Id" >= 0`, `${leafDateSql(table, alias, dateText)} ~ ${pattern}`];
  for (const { name, kind } of AUDIT_COLUMNS[table]) {
    if (kind !== 'date' || name === LEAF_DATE_COLUMN[table]) continue;
    checks.push(`(${dateText(name)} IS NULL OR ${dateText(name)} ~ ${pattern})`);
  }
  return `COALESCE(${checks.join(' AND ')}, false)`;
}

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
}
