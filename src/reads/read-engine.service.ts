import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomBytes, randomInt } from 'node:crypto';
import { once } from 'node:events';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import type { Principal } from '../auth/principal';
import { forbidden } from '../common/problem';
import { csvLine } from './csv';
import { MAX_TAKE, ReadQuery } from './read-query';
import { ReadColumn, ReadTable } from './read-table';

/** Statistics of one column (contract 10 and 12). */
export interface ColumnStatistics {
  min: number;
  max: number;
  mean: number;
  median: number;
  standardDeviation: number;
  histogram: { from: number; to: number; frequency: number }[];
}

const BUCKETS = 10;
/** Rows fetched per round trip while streaming CSV. */
const CSV_BATCH = 1000;
const TWO_POW_63 = 1n << 63n;

/** Collects positional parameters while SQL is assembled, so no caller value is ever spliced in. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return cast ? `$${this.values.length}::${cast}` : `$${this.values.length}`;
  }
}

interface Statement {
  /** `FROM "T" t WHERE …` over the filtered, sampled set. */
  from: string;
  /** Output select list: the row members in order, camelCase aliases. */
  outputs: string;
  /** ORDER BY list of the rows. */
  order: string;
  /** Expression per column name, for statistics. */
  expressions: Map<string, string>;
  params: Params;
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

/** What PostgreSQL returns per statistics column: count, ends, middle values, moments, partition points. */
interface SortedColumn {
  n: number | null;
  mn: number;
  mx: number;
  m1: number;
  m2: number;
  mean: number;
  sd: number;
  /** cut[b-1] = how many values lie in buckets below b, b = 1..9; null when min = max. */
  p: number[] | null;
}

/** The bucket of value x: floor((x - min) * 10 / (max - min)), the last bucket closed. */
const bucketOf = (x: string, e: string) => `least(floor((${x} - ${e}.mn) * ${BUCKETS} / (${e}.mx - ${e}.mn)), ${BUCKETS - 1})`;

/**
 * Statistics of column i from its sorted array `a.v{i}`. The bucket of a value never decreases as the
 * value grows, so bucket b starts at the partition point where the bucket formula first reaches b.
 * width_bucket(x, sorted array) is a binary search that counts the values <= x; the partition point
 * lies between the counts at threshold - d and threshold + d (d: a billionth of the magnitude, far
 * above rounding error), and the few values in between are put in their bucket by the formula itself,
 * so the counts equal those of applying the formula to every value. Outside ordinary magnitudes, the
 * formula is applied to all values.
 */
function columnStatisticsSql(i: number): string {
  const v = `a.v${i}`;
  const ordinary = `(e.mx - e.mn < 'Infinity'::float8 AND greatest(abs(e.mn), abs(e.mx)) BETWEEN 1e-290::float8 AND 1e290::float8)`;
  const threshold = `e.mn + (e.mx - e.mn) * b.b / ${BUCKETS}`;
  const d = `greatest(abs(e.mn), abs(e.mx)) * 1e-9::float8`;
  const partitions = `(SELECT array_agg(r.lo + (SELECT count(*) FROM unnest(${v}[r.lo + 1:r.hi]) x WHERE ${bucketOf('x', 'e')} < b.b) ORDER BY b.b)
       FROM generate_series(1, ${BUCKETS - 1}) b(b),
            LATERAL (SELECT CASE WHEN ${ordinary} THEN width_bucket(${threshold} - ${d}, ${v}) ELSE 0 END AS lo,
                            CASE WHEN ${ordinary} THEN width_bucket(${threshold} + ${d}, ${v}) ELSE e.n END AS hi) r)`;
  return `(SELECT json_build_object('n', e.n, 'mn', e.mn, 'mx', e.mx, 'm1', ${v}[e.h1], 'm2', ${v}[e.h2], 'mean', a.mean${i}, 'sd', a.sd${i},
             'p', CASE WHEN e.mx > e.mn THEN ${partitions} END)
           FROM (SELECT c.n, ${v}[1] AS mn, ${v}[c.n] AS mx, 1 + floor(0.5 * (c.n - 1))::int AS h1, 1 + ceil(0.5 * (c.n - 1))::int AS h2
                   FROM (SELECT coalesce(cardinality(${v}), 0) AS n) c) e)`;
}

/**
 * The one query builder behind every grid read (audit trails and telemetry). From a table description
 * and a parsed query it builds one statement that returns, in a single round trip, the page of rows,
 * the full filtered count and the statistics, all over the same sample: the sample is a predicate on
 * a seeded hash of Id, drawn once per request, so every reference to the filtered set sees the same
 * rows. Statistics are computed by PostgreSQL over the newest 100000 rows, from one index scan and one
 * sort per column (see columnStatisticsSql); rows are never loaded into the process to compute them. CSV is streamed from a
 * server-side cursor in batches, so an export never holds all rows in memory.
 */
@Injectable()
export class ReadEngine {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The JSON envelope `{ rows, total, statistics }`, serialised; rows arrive from PostgreSQL as JSON text. */
  async readJson(table: ReadTable, query: ReadQuery, principal: Principal): Promise<string> {
    const s = this.statement(table, query, principal);
    const p = s.params;
    const statColumns = table.statistics;
    const ctes: string[] = [`base AS NOT MATERIALIZED (SELECT t.* ${s.from})`];
    if (statColumns.length > 0) {
      // One scan of the newest rows, one sort per column: each column's non-null values arrive as a
      // sorted float8 array next to its mean and standard deviation. min, max and the median are then
      // positions in the array, and the histogram is nine binary searches in it (bucketSql).
      const picks = statColumns.map((name, i) => `${s.expressions.get(name)}::float8 AS s${i}`).join(', ');
      const aggregates = statColumns
        .map(
          (_, i) =>
            `array_agg(s${i} ORDER BY s${i}) FILTER (WHERE s${i} IS NOT NULL) AS v${i}, ` +
            `avg(s${i}) AS mean${i}, coalesce(stddev_samp(s${i}), 0) AS sd${i}`,
        )
        .join(', ');
      ctes.push(
        `agg AS MATERIALIZED (SELECT ${aggregates}
           FROM (SELECT ${picks} FROM base t ORDER BY t."${table.dateColumn}" DESC, t."Id" DESC LIMIT ${MAX_TAKE}) n)`,
      );
    }
    const statisticsSql =
      statColumns.length > 0
        ? `(SELECT json_build_array(${statColumns.map((_, i) => columnStatisticsSql(i)).join(', ')})::text FROM agg a) AS statistics`
        : `NULL::text AS statistics`;
    // The page is aggregated straight from its ORDER BY … LIMIT subquery: a subquery with LIMIT is never
    // flattened or reordered, so json_agg sees the rows in page order. (An aggregate ORDER BY would sort
    // the 24 MB of row JSON again, on disk beyond work_mem, for the 100000-row default take.)
    const sql = `
      WITH ${ctes.join(',\n')}
      SELECT (SELECT count(*) FROM base t) AS total,
             (SELECT coalesce(json_agg(row_to_json(o)), '[]'::json)::text
                FROM (SELECT ${s.outputs} FROM base t ORDER BY ${s.order} LIMIT ${p.add(query.take, 'int')}) o) AS rows,
             ${statisticsSql}`;
    const [result] = (await this.dataSource.query(sql, p.values)) as { total: string; rows: string; statistics: string | null }[];
    const statistics = this.shapeStatistics(statColumns, JSON.parse(result.statistics ?? '[]') as SortedColumn[]);
    return `{"rows":${result.rows},"total":${Number(result.total)},"statistics":${JSON.stringify(statistics)}}`;
  }

  /**
   * Streams the rows as CSV from a WITH HOLD cursor on a dedicated connection: PostgreSQL keeps the
   * result, this process holds one batch at a time and waits for the socket to drain between batches.
   * No transaction stays open while the client reads, so a slow download blocks no one.
   */
  async streamCsv(table: ReadTable, query: ReadQuery, principal: Principal, res: Response, fileName: string): Promise<void> {
    const s = this.statement(table, query, principal);
    const cursor = `csv_${randomBytes(8).toString('hex')}`;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    let declared = false;
    try {
      await runner.query(
        `DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR
           SELECT ${s.outputs} ${s.from} ORDER BY ${s.order} LIMIT ${s.params.add(query.take, 'int')}`,
        s.params.values,
      );
      declared = true;
      res.status(200);
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      res.setHeader('Content-Disposition', `attachment; filename="${fileName}.csv"`);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      const names = table.columns.map((c) => c.name);
      res.write(csvLine(names));
      let closed = false;
      res.once('close', () => (closed = true));
      for (;;) {
        const rows = (await runner.query(`FETCH ${CSV_BATCH} FROM ${cursor}`)) as Record<string, unknown>[];
        if (rows.length === 0 || closed) break;
        const chunk = rows.map((row) => csvLine(names.map((n) => row[n]))).join('');
        if (!res.write(chunk) && !closed) await Promise.race([once(res, 'drain'), once(res, 'close')]);
        if (rows.length < CSV_BATCH) break;
      }
      res.end();
    } finally {
      if (declared) await runner.query(`CLOSE ${cursor}`).catch(() => undefined);
      await runner.release();
    }
  }

  /** The filtered, sampled FROM/WHERE, the output list and the order of a read. */
  private statement(table: ReadTable, query: ReadQuery, principal: Principal): Statement {
    const p = new Params();
    const where: string[] = [
      `t."${table.dateColumn}" >= ${p.add(query.from, 'timestamptz')}`,
      `t."${table.dateColumn}" <= ${p.add(query.to, 'timestamptz')}`,
    ];
    if (table.access.kind === 'landlord' && !principal.landlord) throw forbidden();
    if (table.access.kind === 'tenant' && !principal.landlord) {
      // A tenant administrator sees its own tenant's rows; failures against unknown names
      // (no user, so no tenant) are for the landlord only.
      where.push(`t."${table.access.tenantColumn}" = ${p.add(principal.tenantRegistryId, 'int')}`);
      where.push(`t."${table.access.userColumn}" IS NOT NULL`);
    }
    const casts = { integer: 'bigint', uuid: 'uuid', boolean: 'boolean' } as const;
    for (const filter of query.filters) {
      where.push(`${filter.sql} = ${p.add(filter.value, casts[filter.type])}`);
    }
    if (query.search !== null && table.searchColumns.length > 0) {
      const pattern = p.add(`%${escapeLike(query.search)}%`, 'text');
      const matches = table.searchColumns.map((c) => `${c} ILIKE ${pattern}`);
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
      const seed = p.add(String(randomInt(0, 2 ** 47)), 'bigint');
      where.push(`(hashint8extended(t."Id", ${seed}) & 9223372036854775807) < ${p.add(threshold.toString(), 'bigint')}`);
    }

    const expressions = new Map<string, string>();
    const outputs: string[] = [];
    for (const column of table.columns) {
      const expression = this.expression(column, p);
      expressions.set(column.name, expression);
      const output =
        column.kind === 'date' ? `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` : expression;
      outputs.push(`${output} AS ${quoteAlias(column.name)}`);
    }

    const direction = query.ascending ? 'ASC' : 'DESC';
    const field = query.sortField?.toLowerCase();
    const sortColumn = field ? table.columns.find((c) => c.name.toLowerCase() === field) : undefined;
    const order = sortColumn
      ? `${expressions.get(sortColumn.name)} ${direction}, t."Id" ${direction}`
      : `t."${table.dateColumn}" DESC, t."Id" DESC`;

    return { from: `FROM "${table.table}" t WHERE ${where.join(' AND ')}`, outputs: outputs.join(', '), order, expressions, params: p };
  }

  private expression(column: ReadColumn, p: Params): string {
    if (!column.lookup) return column.sql;
    const codes = Object.keys(column.lookup.names).map(Number);
    const names: (string | null)[] = Array.from({ length: Math.max(0, ...codes) }, (_, i) => column.lookup!.names[i + 1] ?? null);
    return `(${p.add(names, 'text[]')})[t."${column.lookup.code}"]`;
  }

  /** Turns the per-column aggregates into the contract's shape; a column with no values is all zeros. */
  private shapeStatistics(columns: string[], sorted: SortedColumn[]): Record<string, ColumnStatistics> {
    const statistics: Record<string, ColumnStatistics> = {};
    columns.forEach((name, i) => {
      const c = sorted[i];
      const n = Number(c?.n ?? 0);
      if (n === 0) {
        statistics[name] = { min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] };
        return;
      }
      const min = Number(c.mn);
      const max = Number(c.mx);
      const width = (max - min) / BUCKETS;
      // Partition points: values before position cut[b] are in buckets below b. min = max: all in the first.
      const cut = [0, ...(c.p ?? new Array<number>(BUCKETS - 1).fill(n)).map(Number), n];
      // percentile_cont(0.5): the middle value, or the two middle values interpolated half way.
      const median = c.m1 === c.m2 ? Number(c.m1) : Number(c.m1) + (Number(c.m2) - Number(c.m1)) * 0.5;
      statistics[name] = {
        min,
        max,
        mean: Number(c.mean),
        median,
        standardDeviation: Number(c.sd),
        histogram: cut.slice(0, BUCKETS).map((position, b) => ({
          from: min + width * b,
          to: b === BUCKETS - 1 ? max : min + width * (b + 1),
          frequency: cut[b + 1] - position,
        })),
      };
    });
    return statistics;
  }
}
