import { MAX_SERIES, ReadQuery, SeriesQuery } from './read-query';
import { ReadTable, RollupDescription } from './read-table';

/*
 * The SQL of a series (contract 17) and of a window's count taken from a per-minute rollup (decision
 * 0021). Pure: every fragment is fixed text of ours or a column named by a table description; caller
 * values only enter through `add`, which returns the placeholder of a bound parameter.
 */

/** Adds a bound value and returns the SQL that reads it (a cast parameter). */
export type AddParam = (value: unknown, type: string) => string;

const EPOCH = `'1970-01-01T00:00:00Z'::timestamptz`;
const MINUTE_MS = 60_000;
/** Groups are joined by their key as text; NULL (a row without the column) becomes this, which no key can be. */
export const NULL_KEY = '\u0001';
/** Rank of the series that sums every group beyond the first MAX_SERIES. */
export const OTHER_RANK = MAX_SERIES + 1;

/** `t."Column"` → `Column`, or null for any other expression. */
export function columnOf(sql: string): string | null {
  const match = /^t\."([^"]+)"$/.exec(sql);
  return match ? match[1] : null;
}

/**
 * The whole minutes of [from, to]: [m0, m1) with m0 the first minute start at or after `from` and m1
 * the last minute start at or before `to` (every minute in between ends at or before `to`); null when
 * the window holds no whole minute. Rows in [from, m0) and [m1, to] are the partial edges.
 */
export function wholeMinutes(from: Date, to: Date): { m0: Date; m1: Date } | null {
  const m0 = Math.ceil(from.getTime() / MINUTE_MS) * MINUTE_MS;
  const m1 = Math.floor(to.getTime() / MINUTE_MS) * MINUTE_MS;
  return m1 > m0 ? { m0: new Date(m0), m1: new Date(m1) } : null;
}

/**
 * The rollup a read may use, or null: the table has one, the read has no sample and no search, and
 * every filter (and `also`: the grouping column) is one of the rollup's keys.
 */
export function usableRollup(table: ReadTable, query: Pick<ReadQuery, 'samplePercentage' | 'filters'> & { search?: string | null }, also: string[] = []): RollupDescription | null {
  const rollup = table.series?.rollup;
  if (!rollup || query.samplePercentage !== 100 || (query.search ?? null) !== null) return null;
  const columns = [...query.filters.map((f) => columnOf(f.sql)), ...also.map(columnOf)];
  return columns.every((c) => c !== null && rollup.keys.includes(c)) ? rollup : null;
}

/** The filters of a read as conditions over the rollup's alias `r`. */
function rollupConditions(query: Pick<ReadQuery, 'filters'>, add: AddParam): string[] {
  const casts = { integer: 'bigint', uuid: 'uuid', boolean: 'boolean', text: 'text' } as const;
  return query.filters.map((f) => `r."${columnOf(f.sql)}" = ${add(f.value, casts[f.type])}`);
}

/**
 * Minutes of the rollup only from the first minute the table still holds a row in: when retention
 * drops a day's partition of the table (contract 16), the rollup's minutes of that day no longer count
 * even before they are pruned. One step down the date index.
 */
function retained(table: ReadTable): string {
  return `r."Minute" >= (SELECT date_bin('1 minute', min(t."${table.dateColumn}"), ${EPOCH}) FROM "${table.table}" t)`;
}

/**
 * The exact count of a window from the rollup: its whole minutes summed from the rollup, the partial
 * minutes at both edges counted from the rows (on the date index). `conditions` are the read's
 * conditions besides the window, over the table's alias `t` (filters alone: see usableRollup).
 */
export function rollupCountSql(table: ReadTable, rollup: RollupDescription, query: ReadQuery, conditions: string[], add: AddParam): string {
  const minutes = wholeMinutes(query.from, query.to);
  const date = `t."${table.dateColumn}"`;
  const rows = (bounds: string[]) => `(SELECT count(*) FROM "${table.table}" t WHERE ${[...bounds, ...conditions].join(' AND ')})`;
  const from = add(query.from.toISOString(), 'timestamptz');
  const to = add(query.to.toISOString(), 'timestamptz');
  if (!minutes) return rows([`${date} >= ${from}`, `${date} <= ${to}`]);
  const m0 = add(minutes.m0.toISOString(), 'timestamptz');
  const m1 = add(minutes.m1.toISOString(), 'timestamptz');
  const whole = [`r."Minute" >= ${m0}`, `r."Minute" < ${m1}`, retained(table), ...rollupConditions(query, add)];
  // bigint like count(*): the answer's writer reads the total as an int8.
  return `((SELECT coalesce(sum(r."Rows"), 0) FROM "${rollup.table}" r WHERE ${whole.join(' AND ')})::bigint
           + ${rows([`${date} >= ${from}`, `${date} < ${m0}`])} + ${rows([`${date} >= ${m1}`, `${date} <= ${to}`])})`;
}

/** What one output row of seriesSql holds, in order. */
export const SERIES_COLUMNS = ['rank', 'key', 'name', 'at', 'count', 'sum', 'min', 'max', 'values', 'invocations', 'totalMicroseconds'] as const;

/**
 * One statement computing every point of a series answer: rows (or rollup minutes and edge rows) are
 * put in buckets of `bucketSeconds` since the epoch (date_bin) and grouped by the `by` column; the
 * groups are ranked by their rows in the window (then by key), the first MAX_SERIES kept and the rest
 * summed under rank OTHER_RANK. One output row per series and bucket holding rows, in rank and time
 * order: rank, key (text; NULL_KEY for a NULL), name, bucket start, count, sum, least, greatest, the
 * number of non-NULL values, and for stage counters the sums of InvokeCount and TotalMicroseconds.
 *
 * `conditions` are the read's conditions besides the window, over alias `t`; `rollup` when
 * usableRollup allowed it and `bucketSeconds` is whole minutes (a minute then lies in one bucket).
 */
export function seriesSql(table: ReadTable, query: SeriesQuery, conditions: string[], value: string | null, rollup: RollupDescription | null, add: AddParam): string {
  const description = table.series;
  if (!description) throw new Error(`${table.table} has no series`);
  const group = query.by ? description.groups.find((g) => g.param === query.by) : undefined;
  const counters = description.invocations;
  const date = `t."${table.dateColumn}"`;
  // Read once per statement (an InitPlan), not parsed again on every row.
  const width = `(SELECT ${add(`${query.bucketSeconds} seconds`, 'interval')})`;
  const from = add(query.from.toISOString(), 'timestamptz');
  const to = add(query.to.toISOString(), 'timestamptz');
  const sumType = rollup ? 'numeric' : null;

  /**
   * The rows of a date range, already summed per bucket and group (sum of a bigint column keeps an
   * exact 128-bit total, far cheaper than adding numerics row by row).
   */
  const fromRows = (bounds: string[]) => {
    const v = value ?? 'NULL::bigint';
    const outputs = [
      `date_bin(${width}, ${date}, ${EPOCH}) AS at`,
      `${group ? `coalesce(${group.sql}::text, '${NULL_KEY}')` : `'all'`} AS g`,
      `max(${group?.nameSql ?? 'NULL::text'}) AS nm`,
      `count(*) AS n`,
      `sum(${v})${sumType ? `::${sumType}` : ''} AS v`,
      `min(${v}) AS mn`,
      `max(${v}) AS mx`,
      `count(${v}) AS nv`,
      `sum(${counters ? `t."${counters.count}"` : 'NULL::bigint'}) AS inv`,
      `sum(${counters ? `t."${counters.totalMicroseconds}"` : 'NULL::bigint'}) AS tot`,
    ];
    return `SELECT ${outputs.join(', ')} FROM "${table.table}" t WHERE ${[...bounds, ...conditions].join(' AND ')} GROUP BY 1, 2`;
  };

  let source: string;
  const minutes = rollup ? wholeMinutes(query.from, query.to) : null;
  if (rollup && minutes) {
    const valueColumn = value === null ? null : columnOf(value);
    if (value !== null && (valueColumn === null || !rollup.values.includes(valueColumn))) throw new Error(`${rollup.table} does not roll up ${value}`);
    const groupColumn = group ? columnOf(group.sql) : null;
    const nameColumn = group?.nameSql ? columnOf(group.nameSql) : null;
    const m0 = add(minutes.m0.toISOString(), 'timestamptz');
    const m1 = add(minutes.m1.toISOString(), 'timestamptz');
    const outputs = [
      `date_bin(${width}, r."Minute", ${EPOCH}) AS at`,
      `${groupColumn ? `coalesce(r."${groupColumn}"::text, '${NULL_KEY}')` : `'all'`} AS g`,
      `${nameColumn && nameColumn === rollup.name ? `r."${nameColumn}"` : 'NULL::text'} AS nm`,
      `r."Rows" AS n`,
      `${valueColumn ? `r."${valueColumn}Sum"` : 'NULL::numeric'} AS v`,
      `${valueColumn ? `r."${valueColumn}Min"` : 'NULL::bigint'} AS mn`,
      `${valueColumn ? `r."${valueColumn}Max"` : 'NULL::bigint'} AS mx`,
      // Rolled-up value columns are NOT NULL: every row has a value.
      `${valueColumn ? 'r."Rows"' : '0::bigint'} AS nv`,
      `NULL::bigint AS inv`,
      `NULL::bigint AS tot`,
    ];
    const whole = [`r."Minute" >= ${m0}`, `r."Minute" < ${m1}`, retained(table), ...rollupConditions(query, add)];
    source = [
      `SELECT ${outputs.join(', ')} FROM "${rollup.table}" r WHERE ${whole.join(' AND ')}`,
      fromRows([`${date} >= ${from}`, `${date} < ${m0}`]),
      fromRows([`${date} >= ${m1}`, `${date} <= ${to}`]),
    ].join('\n UNION ALL ');
  } else {
    source = fromRows([`${date} >= ${from}`, `${date} <= ${to}`]);
  }

  return `WITH src AS (${source}),
    per AS (SELECT g, at, sum(n) AS n, sum(v) AS s, min(mn) AS mn, max(mx) AS mx, sum(nv) AS nv, sum(inv) AS inv, sum(tot) AS tot, max(nm) AS nm
              FROM src GROUP BY g, at),
    ranked AS (SELECT g, row_number() OVER (ORDER BY sum(n) DESC, g COLLATE "C") AS rank, max(nm) AS nm FROM per GROUP BY g)
    SELECT least(k.rank, ${OTHER_RANK}) AS rank, min(k.g) AS key, min(k.nm) AS name, p.at,
           sum(p.n)::float8 AS count, sum(p.s)::float8 AS sum, min(p.mn)::float8 AS min, max(p.mx)::float8 AS max, sum(p.nv)::float8 AS values,
           sum(p.inv)::float8 AS invocations, sum(p.tot)::float8 AS "totalMicroseconds"
      FROM per p JOIN ranked k ON k.g = p.g
     GROUP BY least(k.rank, ${OTHER_RANK}), p.at
     ORDER BY 1, p.at`;
}

/** One point of a series (contract 17); the Redis event tables' points carry `at` and `count` only. */
export interface SeriesPoint {
  at: string;
  count: number;
  sum?: number;
  mean?: number;
  min?: number;
  max?: number;
  invocations?: number;
  meanMicroseconds?: number;
}

export interface SeriesAnswer {
  column: string | null;
  bucketSeconds: number;
  from: string;
  to: string;
  series: { key: string; name: string | null; points: SeriesPoint[] }[];
}

/** The key shown for a group whose column is NULL in its rows. */
export const NULL_GROUP = '(null)';

/** The answer from seriesSql's rows (array mode, in SERIES_COLUMNS order, ordered by rank and time). */
export function seriesAnswer(table: ReadTable, query: SeriesQuery, rows: unknown[][]): SeriesAnswer {
  const group = query.by ? table.series?.groups.find((g) => g.param === query.by) : undefined;
  const counters = table.series?.invocations !== undefined;
  const series: SeriesAnswer['series'] = [];
  let current: { rank: number; entry: SeriesAnswer['series'][number] } | null = null;
  for (const row of rows) {
    const [rank, key, name, at, count, sum, min, max, values, invocations, totalMicroseconds] = row as [
      string | number,
      string,
      string | null,
      Date,
      number,
      number | null,
      number | null,
      number | null,
      number | null,
      number | null,
      number | null,
    ];
    const r = Number(rank);
    if (!current || current.rank !== r) {
      let shownKey: string;
      let shownName: string | null = null;
      if (r === OTHER_RANK) shownKey = 'other';
      else if (!group) shownKey = 'all';
      else if (key === NULL_KEY) shownKey = NULL_GROUP;
      else {
        shownKey = key;
        shownName = group.names ? (group.names[Number(key)] ?? null) : group.nameSql ? name : null;
      }
      current = { rank: r, entry: { key: shownKey, name: shownName, points: [] } };
      series.push(current.entry);
    }
    const point: SeriesPoint = { at: at.toISOString(), count };
    if (query.column !== null) {
      point.sum = sum ?? 0;
      point.mean = values ? (sum ?? 0) / values : 0;
      point.min = min ?? 0;
      point.max = max ?? 0;
    }
    if (counters) {
      point.invocations = invocations ?? 0;
      point.meanMicroseconds = point.invocations > 0 ? (totalMicroseconds ?? 0) / point.invocations : 0;
    }
    current.entry.points.push(point);
  }
  if (!group && series.length === 0) series.push({ key: 'all', name: null, points: [] });
  return { column: query.column, bucketSeconds: query.bucketSeconds, from: query.from.toISOString(), to: query.to.toISOString(), series };
}
