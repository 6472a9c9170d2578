import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { randomInt } from 'node:crypto';
import { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { Principal } from '../access/principal';
import { AnswerStream } from './answer-stream';
import { CsvBatchWriter, csvHeader, JsonRowsWriter } from './answer-writers';
import { BinaryCopy } from './binary-copy';
import { ReadQuery, SeriesQuery } from './read-query';
import { ReadSession, ReadSessions } from './read-session';
import { copyOf, jsonSql, Keyset, orderedByIndex, readStatement, SearchForm, seriesStatement, sortColumnIndex, Statement } from './read-sql';
import { ReadTable } from './read-table';
import { SeriesAnswer, seriesAnswer } from './series-sql';
import { codecForType, ColumnCodec } from './row-codecs';

/** Rows an export reads per batch; the connection goes back to the pool between batches. */
export const EXPORT_BATCH = 2000;
/** Bytes of answer gathered before they are handed to the socket. */
const FLUSH_BYTES = 64 * 1024;
/**
 * Up to this many rows in the window (and filters), a search on a table's search text scans the window
 * by its date index and matches each row (≈ 0.4 µs a row, and flat however long the table's history);
 * beyond it the trigram index on the search text may be used instead, chosen by the planner.
 */
const WINDOW_SEARCH_ROWS = 200_000;

/**
 * The one query builder behind every grid read (audit trails and telemetry): it lends a connection
 * (ReadSessions), builds the statement (read-sql.ts, read-statistics.ts), and paces PostgreSQL's rows
 * into the answer (answer-writers.ts).
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
  readonly sessions: ReadSessions;
  private readonly codecs = new WeakMap<ReadTable, ColumnCodec[]>();

  /** Planner settings per read; not on the embedded PGlite, whose connections share one session. */
  readonly tunePlanner: boolean;
  /** The pool's deadline on a statement (query_timeout), for a streamed read's silence watchdog. */
  private readonly silenceMs: number | null;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.sessions = new ReadSessions((dataSource.driver as PostgresDriver).master as Pool);
    const extra = (dataSource.options as { extra?: { stream?: unknown; query_timeout?: unknown } }).extra;
    this.tunePlanner = extra?.stream === undefined;
    this.silenceMs = typeof extra?.query_timeout === 'number' && extra.query_timeout > 0 ? extra.query_timeout : null;
  }

  /**
   * The statement of a JSON read (jsonSql) with its values bound on `session`, written for the search
   * form the window calls for. `clientPaced`: the statement is read at the pace of an HTTP client.
   */
  async prepareJson(session: ReadSession, table: ReadTable, query: ReadQuery, principal: Principal, clientPaced: boolean): Promise<{ s: Statement; sql: string }> {
    const seed = this.seed();
    let s = readStatement(table, query, principal, session.params(), seed, null);
    let sql = jsonSql(table, query, s);
    await session.bind(s.params, this.tunePlanner, orderedByIndex(table, query), clientPaced);
    if ((await this.searchForm(session, table, query, s)) === 'indexed') {
      // Same values in the same order: the settings just bound serve this text too.
      s = readStatement(table, query, principal, session.params(), seed, null, 'indexed');
      sql = jsonSql(table, query, s);
      await session.allowSort();
    }
    return { s, sql };
  }

  /**
   * Streams `{"statistics":…,"total":…,"rows":[…]}`. Throws before anything is sent (a problem
   * answer is still possible) or, once `answer` has started, leaves it to the caller to cut it off.
   */
  async streamJson(table: ReadTable, query: ReadQuery, principal: Principal, answer: AnswerStream): Promise<void> {
    await this.sessions.lend(async (session) => {
      const { s, sql } = await this.prepareJson(session, table, query, principal, true);
      const writer = new JsonRowsWriter(table, await this.columnCodecs(table, session, s));
      const out = writer.out;
      let waiting: Promise<void> | null = null;
      let failure: unknown = null;

      const copy = new BinaryCopy(copyOf(sql), (row) => {
        if (failure !== null) return;
        try {
          writer.write(row, () => answer.start('application/json; charset=utf-8'));
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
      if (!writer.started) throw new Error('the read returned no count and statistics');
      out.ascii(']}');
      answer.write(out.take());
    });
    await answer.finish();
  }

  /** Streams the rows as CSV with a header row, batch by batch (see the class comment). */
  async streamCsv(table: ReadTable, query: ReadQuery, principal: Principal, answer: AnswerStream, fileName: string): Promise<void> {
    const seed = this.seed();
    const sortIndex = sortColumnIndex(table, query);
    const idIndex = table.columns.findIndex((c) => c.sql === 't."Id"');
    if (idIndex < 0) throw new Error(`${table.table}: a read needs its Id among the columns`);
    let after: Keyset | null = null;
    let form: SearchForm | null = null;
    let emitted = 0;
    const start = () => {
      answer.start('text/csv; charset=utf-8', { 'Content-Disposition': `attachment; filename="${fileName}.csv"` });
      answer.write(csvHeader(table));
    };
    while (emitted < query.take) {
      const limit = Math.min(EXPORT_BATCH, query.take - emitted);
      const batch = await this.sessions.lend(async (session) => {
        const batchSql = (st: Statement) => copyOf(`SELECT ${st.outputs} ${st.from} ORDER BY ${st.order} LIMIT ${st.params.add(limit, 'int')}`);
        let s = readStatement(table, query, principal, session.params(), seed, after, form ?? 'window');
        let sql = batchSql(s);
        await session.bind(s.params, this.tunePlanner, false);
        if (form === null) {
          // Decided once, on the first batch, for the whole export.
          form = await this.searchForm(session, table, query, s);
          if (form === 'indexed') {
            s = readStatement(table, query, principal, session.params(), seed, after, form);
            sql = batchSql(s);
          }
        }
        const writer = new CsvBatchWriter(await this.columnCodecs(table, session, s), sortIndex, idIndex);
        await new BinaryCopy(sql, (row) => writer.write(row)).run(session.client);
        return { chunk: writer.out.take(), rows: writer.rows, last: writer.last };
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

  /** The statement of a series (seriesStatement) with its values bound on `session`. */
  async prepareSeries(session: ReadSession, table: ReadTable, query: SeriesQuery, principal: Principal): Promise<string> {
    const { sql, params } = seriesStatement(table, query, principal, session.params(), this.seed(), false);
    await session.bind(params, this.tunePlanner, false);
    return sql;
  }

  /**
   * A series (contract 17) in one statement (seriesSql): the read's conditions (access, filters, the
   * same seeded sample as the grid), buckets and groups computed by PostgreSQL; only the points come
   * back. Whole minutes come from the table's rollup when the read allows it (usableRollup).
   */
  async series(table: ReadTable, query: SeriesQuery, principal: Principal): Promise<SeriesAnswer> {
    return this.sessions.lend(async (session) => {
      const sql = await this.prepareSeries(session, table, query, principal);
      const result = await session.client.query<unknown[]>({ text: sql, rowMode: 'array' });
      return seriesAnswer(table, query, result.rows);
    });
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
}
