import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Principal } from '../auth/principal';
import { Clock } from '../common/clock';
import { parseReadQuery } from './read-query';
import { ReadEngine } from './read-engine.service';
import { ReadTable } from './read-table';

/**
 * What every grid route does, so controllers stay one line each: parse the query against the table
 * description (400 naming a bad parameter), then answer JSON or stream CSV (`format=csv` or
 * `Accept: text/csv`). "Now" comes from the injected Clock, so the default window moves with it.
 */
@Injectable()
export class GridReads {
  constructor(
    private readonly engine: ReadEngine,
    private readonly clock: Clock,
  ) {}

  async answer(table: ReadTable, req: Request, res: Response, principal: Principal): Promise<void> {
    const query = parseReadQuery(table, req.query as Record<string, unknown>, this.clock.nowMs(), req.get('accept'));
    if (query.csv) {
      await this.engine.streamCsv(table, query, principal, res, table.table);
      return;
    }
    const body = await this.engine.readJson(table, query, principal);
    res.status(200).setHeader('Cache-Control', 'no-store');
    res.type('application/json').send(body);
  }
}
