import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '../access/principal';
import { messageOf, PgErrorCode, pgErrorCode } from '../common/errors';
import { ProblemError } from '../common/problem';
import { Clock } from '../common/clock';
import { AnswerStream, ClientGone, negotiateEncoding } from './answer-stream';
import { ReadEngine } from './read-engine.service';
import { ReadLimits } from './read-limits';
import { parseReadQuery, parseSeriesQuery } from './read-query';
import { ReadTable } from './read-table';
import { SeriesAnswer } from './series-sql';

/**
 * What every grid route does, so controllers stay one line each: parse the query against the table
 * description (400 naming a bad parameter), take a read or export slot (ReadLimits), then stream
 * JSON or CSV (`format=csv` or `Accept: text/csv`), compressed when the client accepts gzip or br.
 * "Now" comes from the injected Clock, so the default window moves with it, and so does the idle
 * limit on slow clients.
 *
 * A failure before the first byte is an ordinary problem answer. After it, the connection is cut:
 * the client sees an incomplete body, never a shorter answer that parses as a whole one.
 */
@Injectable()
export class GridReads {
  private readonly logger = new Logger('GridReads');

  constructor(
    private readonly engine: ReadEngine,
    private readonly limits: ReadLimits,
    private readonly clock: Clock,
  ) {}

  async answer(table: ReadTable, req: Request, res: Response, principal: Principal): Promise<void> {
    const query = parseReadQuery(table, req.query as Record<string, unknown>, this.clock.nowMs(), req.get('accept'));
    const release = query.csv ? this.limits.claimExport(principal) : await this.limits.claimRead();
    if (req.socket.destroyed) {
      // Gone while waiting for a read slot: nothing to do.
      release();
      return;
    }
    const answer = new AnswerStream(res, negotiateEncoding(req.get('accept-encoding')), this.clock);
    try {
      if (query.csv) await this.engine.streamCsv(table, query, principal, answer, table.table);
      else await this.engine.streamJson(table, query, principal, answer);
    } catch (error) {
      if (!answer.started && !answer.gone) throw error;
      answer.abort();
      if (!(error instanceof ClientGone) && !answer.gone) {
        this.logger.error(`${table.table} read cut off: ${messageOf(error)}`);
      }
    } finally {
      release();
    }
  }

  /**
   * The series beside a grid (contract 17): parsed against the same description (400 naming a bad
   * parameter), landlord-only like the read (checked by the guard and again by the engine), and
   * computed by PostgreSQL in one statement under a read slot; the answer is a few points per bucket.
   */
  async series(table: ReadTable, req: Request, principal: Principal): Promise<SeriesAnswer> {
    const query = parseSeriesQuery(table, req.query as Record<string, unknown>, this.clock.nowMs());
    const release = await this.limits.claimRead();
    try {
      return await this.engine.series(table, query, principal);
    } catch (error) {
      // A series read from the rows (a sample, or a table without a rollup) over a long, dense window
      // may pass the statement deadline: a 503 to retry with less, never a 500.
      if (pgErrorCode(error) === PgErrorCode.QueryCanceled) {
        throw new ProblemError(503, 'Service Unavailable', 'The series took longer than the database deadline; narrow the window or leave out samplePercentage.', {
          headers: { 'Retry-After': '5' },
        });
      }
      throw error;
    } finally {
      release();
    }
  }
}
