import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolClient } from 'pg';
import { randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { Principal } from '../auth/principal';
import { forbidden, serviceUnavailable } from '../common/problem';
import { AnswerStream } from './answer-stream';
import { BinaryCopy, CopyRow } from './binary-copy';
import { ByteWriter } from './byte-writer';
import { csvField } from './csv';
import { MAX_TAKE, ReadQuery, SeriesQuery } from './read-query';
import { ReadColumn, ReadTable } from './read-table';
import { rollupCountSql, SeriesAnswer, seriesAnswer, seriesSql, usableRollup } from './series-sql';
import { codecForType, ColumnCodec } from './row-codecs';

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
/** Rows an export reads per batch; the connection goes back to the pool between batches. */
export const EXPORT_BATCH = 2000;
/** Bytes of answer gathered before they are handed to the socket. */
const FLUSH_BYTES = 64 * 1024;
const TWO_POW_63 = 1n << 63n;
/**
 * Up to this many rows in the window (and filters), a search on a table's search text scans the window
 * by its date index and matches each row (≈ 0.4 µs a row, and flat however long the table's history);
 * beyond it the trigram index on the search text may be used instead, chosen by the planner.
 */
const WINDOW_SEARCH_ROWS = 200_000;

/** How a search is written: matched row by row in the window, or open to the trigram index. */
type SearchForm = 'window' | 'indexed';
/** Custom setting class that carries a read's parameters into a COPY statement. */
const SETTING_CLASS = 'tm_read';

/**
 * The values of one statement. COPY takes no bind parameters, so each value is set as a session
 * setting with set_config($n) (itself bound) and the statement reads it back as
 * `current_setting('tm_read.sK_n')::type`: no caller value is ever part of SQL text.
 */
class Params {
  readonly values: { value: unknown; type: string; lowered: boolean }[] = [];
  constructor(private readonly prefix: string) {}

  /** `lowered`: PostgreSQL's lower() is applied to the text when it is set (the same lower() as ILIKE's). */
  add(value: unknown, type: string, lowered = false): string {
    this.values.push({ value, type, lowered });
    return `current_setting('${this.name(this.values.length)}')::${type}`;
  }

  name(n: number): string {
    return `${this.prefix}${n}`;
  }
}

/** Setting-name prefixes in use; the embedded PostgreSQL serves every pool connection from one session. */
class SettingSlots {
  private readonly free: number[] = [];
  private next = 0;
  take(): number {
    return this.free.pop() ?? this.next++;
  }
  give(slot: number): void {
    this.free.push(slot);
  }
}

/** A pool connection lent to one read, with its own setting names. */
class ReadSession {
  /** Set when the connection must not go back to the pool (a COPY was cut off). */
  broken = false;
  private bound = 0;
  private tuned = false;

  constructor(
    readonly client: PoolClient,
    readonly prefix: string,
  ) {}

  params(): Params {
    return new Params(this.prefix);
  }

  /**
   * Sets the statement's values, and planner settings for this read (`planner`: false on the embedded
   * PGlite, whose one session all connections share).
   * - No JIT: the planner's cost of scanning a window row by row crosses jit_above_cost, and compiling
   *   then costs more (≈ 14 ms measured at 10M rows) than the whole read saves.
   * - `ordered`: the rows are wanted in the order of the date index. For a whole window the planner
   *   prefers a parallel bitmap scan and a sort (cheaper in its model), which sends nothing until the
   *   sort is done and measured 90-130 ms against 35-75 ms for the ordered index scan (71,000 rows);
   *   with sorting discouraged it streams the index order from the first row.
   * - No sequential scan: every read is bounded by its window on the date index. When the window
   *   covers most of the table the planner prefers a (parallel) sequential scan, which evaluates
   *   `current_setting(…)::timestamptz` of both bounds on every row, where an index scan reads them
   *   once: a 24-hour count over 1M rows measured ≈ 325 ms per worker against ≈ 70 ms for the
   *   index-only scan (bench/RESULTS.md, "Reads at scale").
   * - `clientPaced`: no statement_timeout (the watchdog of the COPY bounds the server instead).
   */
  async bind(params: Params, planner: boolean, ordered: boolean, clientPaced = false): Promise<void> {
    const sets = params.values.map(({ type, lowered }, i) => {
      const text = `$${i + 1}::${type}::text`;
      return `set_config('${params.name(i + 1)}', ${lowered ? `lower(${text})` : text}, false)`;
    });
    if (planner) {
      sets.unshift(`set_config('jit', 'off', false)`, `set_config('enable_seqscan', 'off', false)`, `set_config('enable_sort', '${ordered ? 'off' : 'on'}', false)`);
    }
    // A statement paced by its HTTP client lasts as long as the client reads; its deadline on the
    // server's side is the COPY's silence watchdog instead (see BinaryCopy).
    if (planner && clientPaced) sets.unshift(`set_config('statement_timeout', '0', false)`);
    if (sets.length === 0) return;
    await this.client.query(`SELECT ${sets.join(', ')}`, params.values.map((v) => v.value));
    this.bound = Math.max(this.bound, params.values.length);
    this.tuned ||= planner;
  }

  /** Sorting allowed again (a search that may use its trigram index sorts what it finds). */
  async allowSort(): Promise<void> {
    if (this.tuned) await this.client.query(`SELECT set_config('enable_sort', 'on', false)`);
  }

  /** Leaves no read values behind on a pooled connection, and its planner settings as they were. */
  async clear(): Promise<void> {
    const sets = Array.from({ length: this.bound }, (_, i) => `set_config('${this.prefix}${i + 1}', '', false)`);
    if (this.tuned) sets.push(`(SELECT array_agg(set_config(name, reset_val, false)) FROM pg_settings WHERE name IN ('jit', 'enable_seqscan', 'enable_sort', 'statement_timeout'))`);
    if (sets.length > 0) await this.client.query(`SELECT ${sets.join(', ')}`);
    this.bound = 0;
    this.tuned = false;
  }
}

interface Statement {
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

/** Where an export batch resumes: after this sort key and Id (text PostgreSQL reads back exactly; null key for NULL). */
interface Keyset {
  key: string | null;
  id: string;
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
const copyOf = (sql: string) => `COPY (${sql}) TO STDOUT (FORMAT binary)`;

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

/** `{"name":` and `,"name":` for each row member, ready to copy into the answer. */
function memberKeys(table: ReadTable): Buffer[] {
  return table.columns.map((c, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`));
}

const int8Of = (row: CopyRow, i: number) => {
  const at = row.starts[i];
  return row.buffer.readInt32BE(at) * 4_294_967_296 + row.buffer.readUInt32BE(at + 4);
};

/**
 * The one query builder behind every grid read (audit trails and telemetry).
 *
 * JSON: one `COPY … TO STDOUT (FORMAT binary)` statement computes, in one snapshot, the full
 * filtered count and the statistics (a MATERIALIZED CTE, so they arrive first, on the first row) and
 * then the rows in page order; each row is written into the answer as PostgreSQL sends it, in its
 * binary form (no JSON built by PostgreSQL, no row objects in Node), and the socket's pace holds
 * PostgreSQL back. Memory per read is a batch, whatever `take` is. The sample is a predicate on a
 * seeded hash of Id, drawn once per request, so every reference to the filtered set sees the same
 * rows. Statistics are computed by PostgreSQL over the newest 100000 rows from one index scan and
 * one sort per column (see columnStatisticsSql).
 *
 * CSV: batches of EXPORT_BATCH rows by keyset on the sort key (then Id), each read on a pooled
 * connection that goes back to the pool before the batch is written to the client, so a slow
 * download holds no connection. Cells are decoded by the same codecs as the JSON members.
 */
@Injectable()
export class ReadEngine {
  private readonly pool: Pool;
  private readonly slots = new SettingSlots();
  private readonly codecs = new WeakMap<ReadTable, ColumnCodec[]>();

  /** Benchmarks only: series computed from the rows even where a rollup could serve them (the naive way). */
  seriesFromRows = false;
  /** Planner settings per read; not on the embedded PGlite, whose connections share one session. */
  private readonly tunePlanner: boolean;
  /** The pool's deadline on a statement (query_timeout), for a streamed read's silence watchdog. */
  private readonly silenceMs: number | null;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = (dataSource.driver as PostgresDriver).master as Pool;
    const extra = (dataSource.options as { extra?: { stream?: unknown; query_timeout?: unknown } }).extra;
    this.tunePlanner = extra?.stream === undefined;
    this.silenceMs = typeof extra?.query_timeout === 'number' && extra.query_timeout > 0 ? extra.query_timeout : null;
  }

  /**
   * Streams `{"statistics":…,"total":…,"rows":[…]}`. Throws before anything is sent (a problem
   * answer is still possible) or, once `answer` has started, leaves it to the caller to cut it off.
   */
  async streamJson(table: ReadTable, query: ReadQuery, principal: Principal, answer: AnswerStream): Promise<void> {
    const seed = this.seed();
    await this.session(async (session) => {
      let s = this.statement(table, query, principal, session.params(), seed, null);
      let sql = copyOf(this.jsonSql(table, query, s));
      await session.bind(s.params, this.tunePlanner, this.orderedByIndex(table, query), true);
      if ((await this.searchForm(session, table, query, s)) === 'indexed') {
        // Same values in the same order: the settings just bound serve this text too.
        s = this.statement(table, query, principal, session.params(), seed, null, 'indexed');
        sql = copyOf(this.jsonSql(table, query, s));
        await session.allowSort();
      }
      const codecs = await this.columnCodecs(table, session, s);
      const keys = memberKeys(table);
      const out = new ByteWriter();
      const first = 3; // total, statistics, n, then the members
      let expected = 1;
      let started = false;
      let waiting: Promise<void> | null = null;
      let failure: unknown = null;

      const copy = new BinaryCopy(sql, (row) => {
        if (failure !== null) return;
        try {
          if (!started) {
            if (row.lengths[0] < 0 || row.lengths[1] < 0) throw new Error('the first row carries no count and statistics');
            const statistics = JSON.parse(row.buffer.toString('utf8', row.starts[1], row.starts[1] + row.lengths[1])) as SortedColumn[] | null;
            answer.start('application/json; charset=utf-8');
            out.ascii(`{"statistics":`);
            out.utf8(JSON.stringify(this.shapeStatistics(table.statistics, statistics ?? [])));
            out.ascii(`,"total":${int8Of(row, 0)},"rows":[`);
            started = true;
          }
          if (row.lengths[2] >= 0) {
            // Rows must arrive numbered 1, 2, 3…: anything else would be a wrong answer, so it is refused.
            if (int8Of(row, 2) !== expected) throw new Error('rows arrived out of order');
            if (expected > 1) out.byte(0x2c);
            for (let i = 0; i < codecs.length; i++) {
              const key = keys[i];
              out.bytes(key, 0, key.length);
              const length = row.lengths[first + i];
              if (length < 0) out.ascii('null');
              else codecs[i].json(out, row.buffer, row.starts[first + i], length);
            }
            out.byte(0x7d);
            expected++;
          }
          if (out.length >= FLUSH_BYTES && !answer.write(out.take()) && waiting === null) {
            // The client is behind: stop reading PostgreSQL until it catches up (or is cut off).
            copy.pause();
            waiting = answer.waitForRoom().then(
              () => {
                waiting = null;
                copy.resume();
              },
              (error: unknown) => {
                failure = error;
                session.broken = true;
                copy.cancel();
              },
            );
          }
        } catch (error) {
          failure = error;
          session.broken = true;
          copy.cancel();
        }
      }, this.silenceMs);
      try {
        await copy.run(session.client);
      } catch (error) {
        throw failure ?? error;
      }
      if (failure !== null) throw failure;
      if (!started) throw new Error('the read returned no count and statistics');
      out.ascii(']}');
      answer.write(out.take());
    });
    await answer.finish();
  }

  /** Streams the rows as CSV with a header row, batch by batch (see the class comment). */
  async streamCsv(table: ReadTable, query: ReadQuery, principal: Principal, answer: AnswerStream, fileName: string): Promise<void> {
    const seed = this.seed();
    const sortIndex = this.sortColumnIndex(table, query);
    const idIndex = table.columns.findIndex((c) => c.sql === 't."Id"');
    if (idIndex < 0) throw new Error(`${table.table}: a read needs its Id among the columns`);
    let after: Keyset | null = null;
    let form: SearchForm | null = null;
    let emitted = 0;
    const start = () => {
      answer.start('text/csv; charset=utf-8', { 'Content-Disposition': `attachment; filename="${fileName}.csv"` });
      answer.write(Buffer.from(csvLineOf(table.columns.map((c) => c.name), () => true)));
    };
    while (emitted < query.take) {
      const limit = Math.min(EXPORT_BATCH, query.take - emitted);
      const batch = await this.session(async (session) => {
        const batchSql = (st: Statement) => copyOf(`SELECT ${st.outputs} ${st.from} ORDER BY ${st.order} LIMIT ${st.params.add(limit, 'int')}`);
        let s = this.statement(table, query, principal, session.params(), seed, after, form ?? 'window');
        let sql = batchSql(s);
        await session.bind(s.params, this.tunePlanner, false);
        if (form === null) {
          // Decided once, on the first batch, for the whole export.
          form = await this.searchForm(session, table, query, s);
          if (form === 'indexed') {
            s = this.statement(table, query, principal, session.params(), seed, after, form);
            sql = batchSql(s);
          }
        }
        const codecs = await this.columnCodecs(table, session, s);
        const out = new ByteWriter();
        let rows = 0;
        let last: Keyset | null = null;
        const copy = new BinaryCopy(sql, (row) => {
          const cells: string[] = new Array<string>(codecs.length);
          for (let i = 0; i < codecs.length; i++) {
            const length = row.lengths[i];
            cells[i] = length < 0 ? '' : csvField(codecs[i].cell(row.buffer, row.starts[i], length), codecs[i].textual);
          }
          out.utf8(`${cells.join(',')}\r\n`);
          rows++;
          const keyLength = row.lengths[sortIndex];
          last = {
            key: keyLength < 0 ? null : codecs[sortIndex].key(row.buffer, row.starts[sortIndex], keyLength),
            id: codecs[idIndex].key(row.buffer, row.starts[idIndex], row.lengths[idIndex]),
          };
        });
        await copy.run(session.client);
        return { chunk: out.take(), rows, last: last as Keyset | null };
      });
      if (emitted === 0) start();
      emitted += batch.rows;
      if (batch.rows > 0 && !answer.write(batch.chunk)) await answer.waitForRoom();
      if (batch.rows < limit || batch.last === null) break;
      after = batch.last;
    }
    if (emitted === 0 && query.take === 0) start();
    await answer.finish();
  }

  /**
   * A series (contract 17) in one statement (seriesSql): the read's conditions (access, filters, the
   * same seeded sample as the grid), buckets and groups computed by PostgreSQL; only the points come
   * back. Whole minutes come from the table's rollup when the read allows it (usableRollup).
   */
  async series(table: ReadTable, query: SeriesQuery, principal: Principal, explain = false): Promise<SeriesAnswer | string> {
    return this.session(async (session) => {
      const { sql, params } = this.seriesStatement(table, query, principal, session);
      await session.bind(params, this.tunePlanner, false);
      if (explain) {
        const plan = await session.client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
        return plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      }
      const result = await session.client.query<unknown[]>({ text: sql, rowMode: 'array' });
      return seriesAnswer(table, query, result.rows);
    });
  }

  /** The statement of a series and its values; `raw` forces the rows (no rollup), for the benchmarks' comparison. */
  private seriesStatement(table: ReadTable, query: SeriesQuery, principal: Principal, session: ReadSession, raw = this.seriesFromRows) {
    const readQuery: ReadQuery = { ...query, take: 0, sortField: null, ascending: false, search: null, csv: false };
    const s = this.statement(table, readQuery, principal, session.params(), this.seed(), null);
    const value = query.column === null ? null : (s.expressions.get(query.column) ?? null);
    const group = query.by ? table.series?.groups.find((g) => g.param === query.by) : undefined;
    // A minute lies in one bucket only when buckets are whole minutes; the counters' invocations are not rolled up.
    const rollup =
      !raw && query.bucketSeconds % 60 === 0 && !table.series?.invocations && (value === null || table.series?.rollup?.values.some((v) => value === `t."${v}"`))
        ? usableRollup(table, readQuery, group ? [group.sql] : [])
        : null;
    return { sql: seriesSql(table, query, s.conditions, value, rollup, (v, type) => s.params.add(v, type)), params: s.params };
  }

  /**
   * EXPLAIN (ANALYZE, BUFFERS) of the statement behind a JSON read, for the benchmarks: the query
   * inside the COPY, with the same settings bound.
   */
  async explain(table: ReadTable, query: ReadQuery, principal: Principal): Promise<string> {
    return this.session(async (session) => {
      const seed = this.seed();
      let s = this.statement(table, query, principal, session.params(), seed, null);
      let sql = this.jsonSql(table, query, s);
      await session.bind(s.params, this.tunePlanner, this.orderedByIndex(table, query));
      if ((await this.searchForm(session, table, query, s)) === 'indexed') {
        s = this.statement(table, query, principal, session.params(), seed, null, 'indexed');
        sql = this.jsonSql(table, query, s);
        await session.allowSort();
      }
      const result = await session.client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
      return result.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  /**
   * One statement, one snapshot: the count and statistics in a MATERIALIZED CTE, joined to the
   * numbered rows. A LEFT JOIN on `true` can only run as a nested loop with the one-row head as its
   * outer side, so the head comes first and the rows follow in the order of their own ORDER BY …
   * LIMIT subquery; the head's values are sent on the first row only. With no rows, one row carries
   * the head alone.
   */
  private jsonSql(table: ReadTable, query: ReadQuery, s: Statement): string {
    const p = s.params;
    const statColumns = table.statistics;
    const ctes: string[] = [`base AS NOT MATERIALIZED (SELECT t.* ${s.from})`];
    if (statColumns.length > 0) {
      // One scan of the newest rows, one sort per column: each column's non-null values arrive as a
      // sorted float8 array next to its mean and standard deviation. min, max and the median are then
      // positions in the array, and the histogram is nine binary searches in it (columnStatisticsSql).
      // Each column is sorted in its own type and the sorted array cast to float8[] afterwards: an
      // integer sort uses PostgreSQL's specialised integer comparator (≈ 20 % less than sorting the
      // float8 values of the same 100000 rows, bench/RESULTS.md issue 21); the order is the same.
      const picks = statColumns.map((name, i) => `${s.expressions.get(name)} AS s${i}`).join(', ');
      const aggregates = statColumns
        .map(
          (_, i) =>
            `(array_agg(s${i} ORDER BY s${i}) FILTER (WHERE s${i} IS NOT NULL))::float8[] AS v${i}, ` +
            `avg(s${i}::float8) AS mean${i}, coalesce(stddev_samp(s${i}::float8), 0) AS sd${i}`,
        )
        .concat('count(*) AS newest')
        .join(', ');
      ctes.push(
        `agg AS MATERIALIZED (SELECT ${aggregates}
           FROM (SELECT ${picks} FROM base t ORDER BY t."${table.dateColumn}" DESC, t."Id" DESC LIMIT ${MAX_TAKE}) n)`,
      );
    }
    const statistics =
      statColumns.length > 0
        ? `(SELECT json_build_array(${statColumns.map((_, i) => columnStatisticsSql(i)).join(', ')})::text FROM agg a)`
        : `'[]'::text`;
    // The statistics scan reads the newest MAX_TAKE rows of the same set: when it found fewer, it read
    // them all and its count is the total, so the set is not scanned a second time (a scalar sub-query
    // in a CASE branch not taken is never run). Otherwise the full count is read from the index.
    // A read the table's per-minute rollup can serve (no sample, no search, filters among its keys)
    // counts whole minutes there and only the partial minutes at the edges from the index (decision 0021).
    const rollup = usableRollup(table, query);
    const count = rollup ? rollupCountSql(table, rollup, query, s.conditions, (value, type) => p.add(value, type)) : `(SELECT count(*) FROM base t)`;
    const total = statColumns.length > 0 ? `CASE WHEN (SELECT newest FROM agg) < ${MAX_TAKE} THEN (SELECT newest FROM agg) ELSE ${count} END` : count;
    ctes.push(`head AS MATERIALIZED (SELECT ${total} AS total, ${statistics} AS statistics)`);
    const firstOnly = `r.n IS NULL OR r.n = 1`;
    return `WITH ${ctes.join(',\n')}
      SELECT CASE WHEN ${firstOnly} THEN h.total END, CASE WHEN ${firstOnly} THEN h.statistics END, r.*
        FROM head h
        LEFT JOIN (SELECT row_number() OVER () AS n, o.*
                     FROM (SELECT ${s.outputs} FROM base t ORDER BY ${s.order} LIMIT ${p.add(query.take, 'int')}) o) r ON true`;
  }

  /** Lends a pooled connection to one read; a connection whose COPY was cut off is discarded. */
  private async session<T>(work: (session: ReadSession) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch {
      throw serviceUnavailable('The database is not reachable.');
    }
    const slot = this.slots.take();
    const session = new ReadSession(client, `${SETTING_CLASS}.s${slot}_`);
    // A checked-out client has no error listener of the pool's; a connection cut under a COPY (by
    // cancel, or by the server) must not become an uncaught 'error' event.
    const onError = () => (session.broken = true);
    client.on('error', onError);
    try {
      return await work(session);
    } finally {
      if (!session.broken) await session.clear().catch(() => (session.broken = true));
      this.slots.give(slot);
      // A broken client keeps the listener: it may still report its end while the pool discards it.
      if (!session.broken) client.off('error', onError);
      client.release(session.broken ? new Error('read cut off') : undefined);
    }
  }

  /** The binary codec of each row member, learned once per table from the statement's result columns. */
  private async columnCodecs(table: ReadTable, session: ReadSession, s: Statement): Promise<ColumnCodec[]> {
    const known = this.codecs.get(table);
    if (known) return known;
    const result = await session.client.query({ text: `SELECT ${s.outputs} FROM "${table.table}" t LIMIT 0`, rowMode: 'array' });
    const codecs = result.fields.map((field, i) => {
      const codec = codecForType(field.dataTypeID);
      const column = table.columns[i];
      if (!codec) throw new Error(`${table.table}.${column.name}: no binary codec for type ${field.dataTypeID}`);
      if (column.kind === 'date' && !codec.date) throw new Error(`${table.table}.${column.name}: a date column must be a timestamptz`);
      return codec;
    });
    this.codecs.set(table, codecs);
    return codecs;
  }

  private seed(): string {
    return String(randomInt(0, 2 ** 47));
  }

  /**
   * How to write a search on a table's search text: row by row in the window when the window holds
   * at most WINDOW_SEARCH_ROWS rows (counted by the date index, stopping there), else open to the
   * trigram index. Left to itself the planner takes the trigram index whenever it expects few
   * matches, and for a common substring that reads matches from the whole history, not the window.
   */
  private async searchForm(session: ReadSession, table: ReadTable, query: ReadQuery, s: Statement): Promise<SearchForm> {
    if (query.search === null || !table.searchText || table.searchColumns.length === 0) return 'window';
    const result = await session.client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 ${s.scope} LIMIT ${WINDOW_SEARCH_ROWS + 1}) w`,
    );
    return result.rows[0].n > WINDOW_SEARCH_ROWS ? 'indexed' : 'window';
  }

  /** Whether the rows are ordered by the date column, which its index gives in order (either way). */
  private orderedByIndex(table: ReadTable, query: ReadQuery): boolean {
    return table.columns[this.sortColumnIndex(table, query)].sql === `t."${table.dateColumn}"`;
  }

  /** The member the rows are ordered by: the sortField's column, or the date column by default. */
  private sortColumnIndex(table: ReadTable, query: ReadQuery): number {
    const field = query.sortField?.toLowerCase();
    const bySort = field ? table.columns.findIndex((c) => c.name.toLowerCase() === field) : -1;
    if (bySort >= 0) return bySort;
    const byDate = table.columns.findIndex((c) => c.sql === `t."${table.dateColumn}"`);
    if (byDate < 0) throw new Error(`${table.table}: the date column must be among the columns`);
    return byDate;
  }

  /** The filtered, sampled FROM/WHERE (resuming after `after` for an export batch), the output list and the order of a read. */
  private statement(
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
    const casts = { integer: 'bigint', uuid: 'uuid', boolean: 'boolean' } as const;
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
      const expression = this.expression(column, p);
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
      const sortIndex = this.sortColumnIndex(table, query);
      const codec = this.codecs.get(table)![sortIndex];
      const id = p.add(after.id, 'bigint');
      const nullable = sortKey !== `t."${table.dateColumn}"` && sortKey !== 't."Id"';
      if (after.key === null) {
        where.push(ascending ? `(${sortKey} IS NULL AND t."Id" > ${id})` : `((${sortKey} IS NULL AND t."Id" < ${id}) OR ${sortKey} IS NOT NULL)`);
      } else {
        const key = p.add(after.key, codec.sqlType);
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

  private expression(column: ReadColumn, p: Params): string {
    if (!column.lookup) return column.sql;
    const codes = Object.keys(column.lookup.names).map(Number);
    const names: (string | null)[] = Array.from({ length: Math.max(0, ...codes) }, (_, i) => column.lookup!.names[i + 1] ?? null);
    // A scalar sub-query is run once per statement (an InitPlan); the setting read and cast to text[]
    // in the select list would be parsed again for every row (≈ 0.5 µs a row, ≈ 40 ms of a 71,000-row answer).
    return `((SELECT ${p.add(names, 'text[]')}))[t."${column.lookup.code}"]`;
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

/** One CSV line of already-decoded cell texts. */
function csvLineOf(cells: string[], textual: (i: number) => boolean): string {
  return `${cells.map((cell, i) => csvField(cell, textual(i))).join(',')}\r\n`;
}
