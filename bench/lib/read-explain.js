'use strict';
/**
 * Benchmarks only (bench/scale.js, bench/series.js), kept out of the service: the plans PostgreSQL
 * chooses for a read, with the same values and planner settings bound as the engine binds for the
 * real answer, and the "naive" series computed from the rows where a rollup could serve it. Built on
 * the engine's public statements from the compiled service in `root` (its dist/).
 */
const { randomInt } = require('node:crypto');
const { join } = require('node:path');

function readExplain(root) {
  const { seriesStatement } = require(join(root, 'dist/reads/read-sql'));
  const { seriesAnswer } = require(join(root, 'dist/reads/series-sql'));

  async function explain(session, sql) {
    const result = await session.client.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
    return result.rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  /** The series statement computed from the rows (no rollup), bound on `session` as the engine binds its own. */
  async function prepareSeriesFromRows(engine, session, table, query, principal) {
    const { sql, params } = seriesStatement(table, query, principal, session.params(), String(randomInt(0, 2 ** 47)), true);
    await session.bind(params, engine.tunePlanner, false);
    return sql;
  }

  return {
    /** EXPLAIN (ANALYZE, BUFFERS) of the statement behind a JSON read: the query inside the COPY. */
    explainRead: (engine, table, query, principal) =>
      engine.sessions.lend(async (session) => explain(session, (await engine.prepareJson(session, table, query, principal, false)).sql)),
    /** EXPLAIN (ANALYZE, BUFFERS) of a series statement; from the rows (the naive way) when `fromRows`. */
    explainSeries: (engine, table, query, principal, fromRows = false) =>
      engine.sessions.lend(async (session) =>
        explain(session, fromRows ? await prepareSeriesFromRows(engine, session, table, query, principal) : await engine.prepareSeries(session, table, query, principal)),
      ),
    /** A series computed from the rows even where a rollup could serve it (the naive way), answered as the engine answers. */
    seriesFromRows: (engine, table, query, principal) =>
      engine.sessions.lend(async (session) => {
        const sql = await prepareSeriesFromRows(engine, session, table, query, principal);
        const result = await session.client.query({ text: sql, rowMode: 'array' });
        return seriesAnswer(table, query, result.rows);
      }),
  };
}

module.exports = { readExplain };
