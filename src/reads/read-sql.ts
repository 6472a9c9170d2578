/**
 * The SQL of a read, built from its table description and parsed query: pure text and values, no
 * connection. Every caller value goes through Params (a session setting read back with a cast), so
 * none is ever part of the SQL text.
 */
import type { Principal } from '../access/principal';
import { forbidden } from '../common/problem';
import { MAX_TAKE, ReadQuery, SeriesQuery } from './read-query';
import type { Params } from './read-session';
import { statisticsSql } from './read-statistics';
import { ReadColumn, ReadTable } from './read-table';
import { rollupCountSql, seriesSql, usableRollup } from './series-sql';

const TWO_POW_63 = 1n << 63n;

/** How a search is written: matched row by row in the window, or open to the trigram index. */
export type SearchForm = 'window' | 'indexed';

export interface Statement {
  /** `FROM "T" t WHERE …` over the filtered, sampled set. */
  from: string;
  /** `FROM "T" t WHERE …` of the window, access and filters alone (no search, no sample). */
  scope: string;
  /** The conditions besides the window (access, filters, search, sample), each over alias `t`. */
  conditions: string[];
  /** Output select list: the row members in order (dates as timestamptz, formatted while streaming). */
  outputs: string;
  /** ORDER BY list of the rows. */
  order: string;
  /** Expression per column name, for statistics. */
  expressions: Map<string, string>;
  params: Params;
}

/**
 * Where an export batch resumes: after this sort key and Id (text PostgreSQL reads back exactly; null
 * key for NULL); `keyType` is the SQL type the key is read back as.
 */
export interface Keyset {
  key: string | null;
  id: string;
  keyType: string;
}

/** The codes of lookup member `name` whose shown name contains `search`, case-insensitively. */
function searchedCodes(table: ReadTable, name: string, search: string): number[] {
  const lookup = table.columns.find((c) => c.name === name)?.lookup;
  if (!lookup) throw new Error(`searchLookups names ${name}, which is no lookup column of ${table.table}`);
  const needle = search.toLocaleLowerCase();
  return Object.entries(lookup.names)
    .filter(([, shown]) => shown.toLocaleLowerCase().includes(needle))
    .map(([code]) => Number(code));
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const quoteAlias = (name: string) => `"${name.replace(/"/g, '""')}"`;
export const copyOf = (sql: string) => `COPY (${sql}) TO STDOUT (FORMAT binary)`;

/** Whether the rows are ordered by the date column, which its index gives in order (either way). */
export function orderedByIndex(table: ReadTable, query: ReadQuery): boolean {
  return table.columns[sortColumnIndex(table, query)].sql === `t."${table.dateColumn}"`;
}

/** The member the rows are ordered by: the sortField's column, or the date column by default. */
export function sortColumnIndex(table: ReadTable, query: ReadQuery): number {
  const field = query.sortField?.toLowerCase();
  const bySort = field ? table.columns.findIndex((c) => c.name.toLowerCase() === field) : -1;
  if (bySort >= 0) return bySort;
  const byDate = table.columns.findIndex((c) => c.sql === `t."${table.dateColumn}"`);
  if (byDate < 0) throw new Error(`${table.table}: the date column must be among the columns`);
  return byDate;
}

/** The filtered, sampled FROM/WHERE (resuming after `after` for an export batch), the output list and the order of a read. */
export function readStatement(
  table: ReadTable,
  query: ReadQuery,
  principal: Principal,
  p: Params,
  seed: string,
  after: Keyset | null,
  searchForm: SearchForm = 'window',
): Statement {
  const where: string[] = [
    `t."${table.dateColumn}" >= ${p.add(query.from.toISOString(), 'timestamptz')}`,
    `t."${table.dateColumn}" <= ${p.add(query.to.toISOString(), 'timestamptz')}`,
  ];
  const windowBounds = where.length;
  if (table.access.kind === 'landlord' && !principal.landlord) throw forbidden();
  if (table.access.kind === 'tenant' && !principal.landlord) {
    // A tenant administrator sees its own tenant's rows; failures against unknown names
    // (no user, so no tenant) are for the landlord only.
    where.push(`t."${table.access.tenantColumn}" = ${p.add(principal.tenantRegistryId, 'int')}`);
    where.push(`t."${table.access.userColumn}" IS NOT NULL`);
  }
  if (table.access.kind === 'tenants' && !principal.landlord) {
    const tenant = p.add(principal.tenantRegistryId, 'int');
    where.push(`(${table.access.tenantColumns.map((column) => `t."${column}" = ${tenant}`).join(' OR ')})`);
  }
  const casts = { integer: 'bigint', uuid: 'uuid', boolean: 'boolean', text: 'text' } as const;
  for (const filter of query.filters) {
    where.push(`${filter.sql} = ${p.add(filter.value, casts[filter.type])}`);
  }
  const scope = [...where];
  if (query.search !== null && table.searchColumns.length > 0) {
    const matches: string[] = [];
    if (!table.searchText) {
      const pattern = p.add(`%${escapeLike(query.search)}%`, 'text');
      matches.push(...table.searchColumns.map((c) => `${c} ILIKE ${pattern}`));
    } else if (query.search.includes('\u001f')) {
      // The separator of the search text: nothing stored contains it, and a search for it must not
      // match across two columns.
      matches.push('false');
    } else {
      const pattern = p.add(`%${escapeLike(query.search)}%`, 'text', true);
      // coalesce() hides the column from its trigram index, so the window's date index is used.
      matches.push(`${searchForm === 'indexed' ? table.searchText : `coalesce(${table.searchText}, '')`} LIKE ${pattern}`);
    }
    for (const name of table.searchLookups ?? []) {
      const codes = searchedCodes(table, name, query.search);
      if (codes.length > 0) matches.push(`t."${table.columns.find((c) => c.name === name)!.lookup!.code}" = ANY(${p.add(codes, 'int[]')})`);
    }
    where.push(`(${matches.join(' OR ')})`);
  }
  if (query.samplePercentage <= 0) where.push('false');
  else if (query.samplePercentage < 100) {
    // Keep a row when a seeded 63-bit hash of its Id falls under p% of the range: unbiased, drawn
    // once per request (the seed), and the same rows wherever the filtered set is referenced.
    const threshold = (BigInt(Math.round(query.samplePercentage * 1e6)) * TWO_POW_63) / 100_000_000n;
    where.push(`(hashint8extended(t."Id", ${p.add(seed, 'bigint')}) & 9223372036854775807) < ${p.add(threshold.toString(), 'bigint')}`);
  }

  const expressions = new Map<string, string>();
  const outputs: string[] = [];
  for (const column of table.columns) {
    const expression = columnExpression(column, p);
    expressions.set(column.name, expression);
    outputs.push(`${expression} AS ${quoteAlias(column.name)}`);
  }

  const direction = query.ascending ? 'ASC' : 'DESC';
  const field = query.sortField?.toLowerCase();
  const sortColumn = field ? table.columns.find((c) => c.name.toLowerCase() === field) : undefined;
  const sortKey = sortColumn ? expressions.get(sortColumn.name)! : `t."${table.dateColumn}"`;
  const ascending = sortColumn ? query.ascending : false;
  const order = sortColumn ? `${sortKey} ${direction}, t."Id" ${direction}` : `t."${table.dateColumn}" DESC, t."Id" DESC`;

  if (after) {
    // Resume after the last row sent, in the order's own terms. NULLs sort last ascending and first
    // descending (PostgreSQL's default); the window bounds the date column, so it is never NULL.
    const id = p.add(after.id, 'bigint');
    const nullable = sortKey !== `t."${table.dateColumn}"` && sortKey !== 't."Id"';
    if (after.key === null) {
      where.push(ascending ? `(${sortKey} IS NULL AND t."Id" > ${id})` : `((${sortKey} IS NULL AND t."Id" < ${id}) OR ${sortKey} IS NOT NULL)`);
    } else {
      const key = p.add(after.key, after.keyType);
      if (!ascending) where.push(`(${sortKey}, t."Id") < (${key}, ${id})`);
      else if (nullable) where.push(`((${sortKey}, t."Id") > (${key}, ${id}) OR ${sortKey} IS NULL)`);
      else where.push(`(${sortKey}, t."Id") > (${key}, ${id})`);
    }
  }

  return {
    from: `FROM "${table.table}" t WHERE ${where.join(' AND ')}`,
    scope: `FROM "${table.table}" t WHERE ${scope.join(' AND ')}`,
    conditions: where.slice(windowBounds),
    outputs: outputs.join(', '),
    order,
    expressions,
    params: p,
  };
}

function columnExpression(column: ReadColumn, p: Params): string {
  if (!column.lookup) return column.sql;
  const codes = Object.keys(column.lookup.names).map(Number);
  const names: (string | null)[] = Array.from({ length: Math.max(0, ...codes) }, (_, i) => column.lookup!.names[i + 1] ?? null);
  // A scalar sub-query is run once per statement (an InitPlan); the setting read and cast to text[]
  // in the select list would be parsed again for every row (≈ 0.5 µs a row, ≈ 40 ms of a 71,000-row answer).
  return `((SELECT ${p.add(names, 'text[]')}))[t."${column.lookup.code}"]`;
}

/**
 * One statement, one snapshot: the count and statistics in a MATERIALIZED CTE, joined to the
 * numbered rows. A LEFT JOIN on `true` can only run as a nested loop with the one-row head as its
 * outer side, so the head comes first and the rows follow in the order of their own ORDER BY …
 * LIMIT subquery; the head's values are sent on the first row only. With no rows, one row carries
 * the head alone.
 */
export function jsonSql(table: ReadTable, query: ReadQuery, s: Statement): string {
  const p = s.params;
  const stats = statisticsSql(table, s.expressions);
  const ctes: string[] = [`base AS NOT MATERIALIZED (SELECT t.* ${s.from})`];
  if (stats.cte) ctes.push(stats.cte);
  // The statistics scan reads the newest MAX_TAKE rows of the same set: when it found fewer, it read
  // them all and its count is the total, so the set is not scanned a second time (a scalar sub-query
  // in a CASE branch not taken is never run). Otherwise the full count is read from the index.
  // A read the table's per-minute rollup can serve (no sample, no search, filters among its keys)
  // counts whole minutes there and only the partial minutes at the edges from the index (decision 0021).
  const rollup = usableRollup(table, query);
  const count = rollup ? rollupCountSql(table, rollup, query, s.conditions, (value, type) => p.add(value, type)) : `(SELECT count(*) FROM base t)`;
  const total = stats.newest ? `CASE WHEN ${stats.newest} < ${MAX_TAKE} THEN ${stats.newest} ELSE ${count} END` : count;
  ctes.push(`head AS MATERIALIZED (SELECT ${total} AS total, ${stats.statistics} AS statistics)`);
  const firstOnly = `r.n IS NULL OR r.n = 1`;
  return `WITH ${ctes.join(',\n')}
    SELECT CASE WHEN ${firstOnly} THEN h.total END, CASE WHEN ${firstOnly} THEN h.statistics END, r.*
      FROM head h
      LEFT JOIN (SELECT row_number() OVER () AS n, o.*
                   FROM (SELECT ${s.outputs} FROM base t ORDER BY ${s.order} LIMIT ${p.add(query.take, 'int')}) o) r ON true`;
}

/** The statement of a series and its values; `raw` forces the rows (no rollup), for the benchmarks' comparison (bench/lib/read-explain.js). */
export function seriesStatement(table: ReadTable, query: SeriesQuery, principal: Principal, p: Params, seed: string, raw: boolean): { sql: string; params: Params } {
  const readQuery: ReadQuery = { ...query, take: 0, sortField: null, ascending: false, search: null, csv: false };
  const s = readStatement(table, readQuery, principal, p, seed, null);
  const value = query.column === null ? null : (s.expressions.get(query.column) ?? null);
  const group = query.by ? table.series?.groups.find((g) => g.param === query.by) : undefined;
  // A minute lies in one bucket only when buckets are whole minutes; the counters' invocations are not rolled up.
  const rollup =
    !raw && query.bucketSeconds % 60 === 0 && !table.series?.invocations && (value === null || table.series?.rollup?.values.some((v) => value === `t."${v}"`))
      ? usableRollup(table, readQuery, group ? [group.sql] : [])
      : null;
  return { sql: seriesSql(table, query, s.conditions, value, rollup, (v, type) => s.params.add(v, type)), params: s.params };
}
