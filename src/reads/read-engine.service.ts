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

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
const quoteAlias = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The one query builder behind every grid read (audit trails and telemetry). From a table description
 * and a parsed query it builds one statement that returns, in a single round trip, the page of rows,
 * the full filtered count and the statistics, all over the same sample: the sample is a predicate on
 * a seeded hash of Id, drawn once per request, so every reference to the filtered set sees the same
 * rows. Statistics are computed by PostgreSQL (percentile_cont, stddev_samp, bucket counts) over the
 * newest 100000 rows; rows are never loaded into the process to compute them. CSV is streamed from a
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
      const picks = statColumns.map((name, i) => `${s.expressions.get(name)}::float8 AS "s${i}"`).join(', ');
      const pairs = statColumns.map((_, i) => `(${i}, n."s${i}")`).join(', ');
      ctes.push(
        `newest AS (SELECT ${picks} FROM base t ORDER BY t."${table.dateColumn}" DESC, t."Id" DESC LIMIT ${MAX_TAKE})`,
        `pairs AS (SELECT v.i, v.x FROM newest n CROSS JOIN LATERAL (VALUES ${pairs}) AS v(i, x) WHERE v.x IS NOT NULL)`,
        `agg AS (SELECT i, min(x) AS mn, max(x) AS mx, avg(x) AS mean,
                        percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS median,
                        coalesce(stddev_samp(x), 0) AS sd, count(*) AS n
                   FROM pairs GROUP BY i)`,
        `hist AS (SELECT p.i,
                         CASE WHEN a.mx = a.mn THEN 0 ELSE least(floor((p.x - a.mn) * ${BUCKETS} / (a.mx - a.mn)), ${BUCKETS - 1})::int END AS b,
                         count(*) AS c
                    FROM pairs p JOIN agg a ON a.i = p.i GROUP BY 1, 2)`,
      );
    }
    const statisticsSql =
      statColumns.length > 0
        ? `(SELECT coalesce(json_agg(json_build_object('i', a.i, 'min', a.mn, 'max', a.mx, 'mean', a.mean, 'median', a.median,
                   'sd', a.sd, 'n', a.n, 'b', (SELECT json_object_agg(h.b, h.c) FROM hist h WHERE h.i = a.i))), '[]'::json)::text FROM agg a)`
        : `'[]'::text`;
    const sql = `
      WITH ${ctes.join(',\n')}
      SELECT (SELECT count(*) FROM base t) AS total,
             (SELECT coalesce(json_agg(row_to_json(o) ORDER BY t."__rn"), '[]'::json)::text
                FROM (SELECT t.*, row_number() OVER (ORDER BY ${s.order}) AS "__rn"
                        FROM base t ORDER BY ${s.order} LIMIT ${p.add(query.take, 'int')}) t
                CROSS JOIN LATERAL (SELECT ${s.outputs}) o) AS rows,
             ${statisticsSql} AS statistics`;
    const [result] = (await this.dataSource.query(sql, p.values)) as { total: string; rows: string; statistics: string }[];
    const statistics = this.shapeStatistics(statColumns, JSON.parse(result.statistics));
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
    for (const filter of query.filters) {
      where.push(`${filter.sql} = ${p.add(filter.value, filter.type === 'integer' ? 'bigint' : 'uuid')}`);
    }
    if (query.search !== null && table.searchColumns.length > 0) {
      const pattern = p.add(`%${escapeLike(query.search)}%`, 'text');
      where.push(`(${table.searchColumns.map((c) => `${c} ILIKE ${pattern}`).join(' OR ')})`);
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
  private shapeStatistics(
    columns: string[],
    aggregates: { i: number; min: number; max: number; mean: number; median: number; sd: number; n: number; b: Record<string, number> | null }[],
  ): Record<string, ColumnStatistics> {
    const statistics: Record<string, ColumnStatistics> = {};
    columns.forEach((name, i) => {
      const a = aggregates.find((x) => x.i === i);
      if (!a || Number(a.n) === 0) {
        statistics[name] = { min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] };
        return;
      }
      const min = Number(a.min);
      const max = Number(a.max);
      const width = (max - min) / BUCKETS;
      const histogram = Array.from({ length: BUCKETS }, (_, b) => ({
        from: min + width * b,
        to: b === BUCKETS - 1 ? max : min + width * (b + 1),
        frequency: Number(a.b?.[String(b)] ?? 0),
      }));
      statistics[name] = {
        min,
        max,
        mean: Number(a.mean),
        median: Number(a.median),
        standardDeviation: Number(a.sd),
        histogram,
      };
    });
    return statistics;
  }
}
