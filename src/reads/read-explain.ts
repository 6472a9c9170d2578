/**
 * Benchmarks only (bench/scale.js, bench/series.js): the plans PostgreSQL chooses for a read, with
 * the same values and planner settings bound as the engine binds for the real answer. No route uses it.
 */
import type { Principal } from '../auth/principal';
import type { ReadEngine } from './read-engine.service';
import type { ReadQuery, SeriesQuery } from './read-query';
import type { ReadSession } from './read-session';
import type { ReadTable } from './read-table';

async function explain(session: ReadSession, sql: string): Promise<string> {
  const result = await session.client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
  return result.rows.map((r) => r['QUERY PLAN']).join('\n');
}

/** EXPLAIN (ANALYZE, BUFFERS) of the statement behind a JSON read: the query inside the COPY. */
export function explainRead(engine: ReadEngine, table: ReadTable, query: ReadQuery, principal: Principal): Promise<string> {
  return engine.sessions.lend(async (session) => explain(session, (await engine.prepareJson(session, table, query, principal, false)).sql));
}

/** EXPLAIN (ANALYZE, BUFFERS) of a series statement (from the rows when `engine.seriesFromRows` is set). */
export function explainSeries(engine: ReadEngine, table: ReadTable, query: SeriesQuery, principal: Principal): Promise<string> {
  return engine.sessions.lend(async (session) => explain(session, await engine.prepareSeries(session, table, query, principal)));
}
