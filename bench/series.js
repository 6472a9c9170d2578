/* eslint-disable */
// Issue 21: the grid page and the Series route over a dense window. Run: npm run build && node bench/series-load.js
// (once: 10,000,000 ArchiverWarning rows over 14 hours in the database tm_bench_series, kept), then
// node bench/series.js (as often as needed; BENCH_DROP=1 drops the database at the end).
//
// Over HTTP against the compiled service (its own process, this checkout's dist/), targets alternating
// over BENCH_ROUNDS rounds after a warm-up, medians:
// - the grid page (take=100, default window: total over every row of the last hour, statistics over the
//   newest 100,000), from this build and (BENCH_BEFORE=<checkout with dist/>, e.g. main) from the
//   build before, alternated in the same rounds on the same database;
// - Series over the default window grouped by stage, by model and without grouping, and over 24 hours
//   grouped by stage;
// - "naive": the same series statement computed from the rows (the rollup not used), in-process through
//   the same engine's statement (bench/lib/read-explain.js seriesFromRows), with a statement deadline long enough to finish.
// VACUUM ANALYZE of the table and its rollup first (the condition). EXPLAIN (ANALYZE, BUFFERS)
// of every statement is written to bench/plans-series-<rows>.txt.
require('reflect-metadata');
const { Pool } = require('pg');
const { writeFileSync, mkdtempSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { performance } = require('node:perf_hooks');
const { dropNamedDatabase, startService, signInAdministrator, median } = require('./lib/service');

const SERVER = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = process.env.BENCH_DB || 'tm_bench_series';
const ROUNDS = Number(process.env.BENCH_ROUNDS || 9);
const NAIVE_ROUNDS = Number(process.env.BENCH_NAIVE_ROUNDS || 3);
const ROOT = process.env.BENCH_ROOT || join(__dirname, '..');
const ms = (x) => `${x.toFixed(1)} ms`;
const hoursAgo = (h) => new Date(Date.now() - h * 3_600_000).toISOString();

async function main() {
  const admin = new Pool({ connectionString: SERVER, max: 1 });
  const exists = (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [DB])).rowCount > 0;
  await admin.end();
  if (!exists) throw new Error(`no database ${DB}: run node bench/series-load.js first (BENCH_DB, BENCH_ROWS for another size)`);
  const url = new URL(SERVER);
  url.pathname = `/${DB}`;
  const pool = new Pool({ connectionString: url.toString(), max: 2 });
  const service = await startService({ ConnectionString: url.toString() }, 47_000 + Math.floor(Math.random() * 1000), ROOT);
  const before = process.env.BENCH_BEFORE ? await startService({ ConnectionString: url.toString() }, 48_000 + Math.floor(Math.random() * 1000), process.env.BENCH_BEFORE) : null;
  let app;
  try {
    await pool.query(`VACUUM ANALYZE "ArchiverWarning"`);
    await pool.query(`VACUUM ANALYZE "ArchiverWarningMinute"`);
    const rows = Number((await pool.query(`SELECT count(*) AS n FROM "ArchiverWarning"`)).rows[0].n);
    const inHour = Number((await pool.query(`SELECT count(*) AS n FROM "ArchiverWarning" WHERE "CreatedDate" >= now() - interval '1 hour' AND "CreatedDate" <= now()`)).rows[0].n);
    console.log(`${rows.toLocaleString()} rows, ${inHour.toLocaleString()} in the last hour`);

    // In-process engine for the naive series and the plans (a long statement deadline: the naive way takes seconds).
    const { createApp } = require(join(ROOT, 'dist/bootstrap'));
    const { loadSettings } = require(join(ROOT, 'dist/config/settings'));
    const { resolveSecrets } = require(join(ROOT, 'dist/config/secrets'));
    const { ReadEngine } = require(join(ROOT, 'dist/reads/read-engine.service'));
    const { explainRead, explainSeries, seriesFromRows } = require('./lib/read-explain').readExplain(ROOT);
    const { parseReadQuery, parseSeriesQuery } = require(join(ROOT, 'dist/reads/read-query'));
    const { ARCHIVER_WARNING_TABLE } = require(join(ROOT, 'dist/telemetry/telemetry.tables'));
    app = await createApp(
      resolveSecrets(
        loadSettings({
          ConnectionString: url.toString(),
          JwtKey: 'bench-jwt-key-0123456789abcdef0123456789abcdef',
          ApiHmacKey: 'bench-api-hmac-key-0123456789abcdef',
          DataDirectory: mkdtempSync(join(tmpdir(), 'tm-series-')),
          LogLevel: 'error',
          DatabaseQueryTimeoutMilliseconds: '600000',
        }),
      ),
      { logger: ['error'] },
    );
    const engine = app.get(ReadEngine);
    const landlord = { landlord: true, tenantRegistryId: 1, userRegistryId: 1, permissions: [] };

    const { token } = await signInAdministrator(service.url);
    const beforeToken = before ? (await signInAdministrator(before.url)).token : null;
    const targets = [
      ['grid page (take=100), default window', '/api/ArchiverWarning', () => ({ take: '100' })],
      ['grid page (take=100), stageId=3', '/api/ArchiverWarning', () => ({ take: '100', stageId: '3' })],
      ['Series, default window, by=stageId', '/api/ArchiverWarning/Series', () => ({ by: 'stageId' })],
      ['Series, default window, by=entityAnalysisModelGuid', '/api/ArchiverWarning/Series', () => ({ by: 'entityAnalysisModelGuid' })],
      ['Series, default window, by=instance', '/api/ArchiverWarning/Series', () => ({ by: 'instance' })],
      ['Series, default window, one series', '/api/ArchiverWarning/Series', () => ({})],
      ['Series, last 24 h, by=stageId', '/api/ArchiverWarning/Series', () => ({ by: 'stageId', from: hoursAgo(24) })],
    ];
    const read = async (target, path, query, bearer) => {
      const start = performance.now();
      const res = await fetch(`${target.url}${path}?${new URLSearchParams(query)}`, {
        headers: { authorization: `Bearer ${bearer}`, 'accept-encoding': 'gzip, deflate, br, zstd' },
      });
      const body = await res.json();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - start, body };
    };
    const builds = [['', service, token]];
    if (before) builds.push([' [before]', before, beforeToken]);
    const samples = new Map();
    const facts = new Map();
    for (let round = -2; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const [name, path, query] of order) {
        for (const [tag, target, bearer] of round % 2 === 0 ? builds : [...builds].reverse()) {
          // The build before has no series route.
          if (tag && path.endsWith('/Series')) continue;
          const r = await read(target, path, query(), bearer);
          const key = name + tag;
          if (!samples.has(key)) samples.set(key, []);
          if (round >= 0) samples.get(key).push(r.ms);
          facts.set(key, path.endsWith('/Series') ? `${r.body.series.length} series, ${r.body.series.reduce((a, s) => a + s.points.length, 0)} points, ${r.body.bucketSeconds} s` : `total ${r.body.total.toLocaleString()}`);
        }
      }
    }
    const table = [...samples.entries()].map(([name, xs]) => ({ read: name, answer: facts.get(name), p50: ms(median(xs)), samples: xs.map(Math.round).join(' ') }));

    // The naive way, in-process on the same engine: the series statement over the rows.
    const naive = [];
    for (const [name, path, query] of targets.filter(([, path]) => path.endsWith('/Series'))) {
      const times = { rollup: [], rows: [] };
      for (let round = 0; round < NAIVE_ROUNDS; round++) {
        for (const raw of round % 2 ? [true, false] : [false, true]) {
          const series = parseSeriesQuery(ARCHIVER_WARNING_TABLE, query(), Date.now());
          const start = performance.now();
          await (raw ? seriesFromRows(engine, ARCHIVER_WARNING_TABLE, series, landlord) : engine.series(ARCHIVER_WARNING_TABLE, series, landlord));
          times[raw ? 'rows' : 'rollup'].push(performance.now() - start);
        }
      }
      naive.push({ series: name, 'rollup (in-process)': ms(median(times.rollup)), 'rows, no rollup (naive)': ms(median(times.rows)), ratio: `${(median(times.rows) / median(times.rollup)).toFixed(1)}x` });
    }

    const plans = [];
    for (const [name, path, query] of targets) {
      const plan = path.endsWith('/Series')
        ? await explainSeries(engine, ARCHIVER_WARNING_TABLE, parseSeriesQuery(ARCHIVER_WARNING_TABLE, query(), Date.now()), landlord)
        : await explainRead(engine, ARCHIVER_WARNING_TABLE, parseReadQuery(ARCHIVER_WARNING_TABLE, query(), Date.now(), undefined), landlord);
      plans.push(`### ${name}\n${plan}\n`);
    }
    plans.push(`### naive: Series, default window, by=stageId, from the rows\n${await explainSeries(engine, ARCHIVER_WARNING_TABLE, parseSeriesQuery(ARCHIVER_WARNING_TABLE, { by: 'stageId' }, Date.now()), landlord, true)}\n`);
    const file = join(__dirname, `plans-series-${rows}.txt`);
    writeFileSync(file, `EXPLAIN (ANALYZE, BUFFERS), ${rows.toLocaleString()} ArchiverWarning rows, ${inHour.toLocaleString()} in the last hour, ${new Date().toISOString()}\n\n${plans.join('\n')}`);

    console.log(`\nHTTP p50 over ${ROUNDS} alternating rounds after 2 warm-up (load average at the end: ${require('node:os').loadavg().map((x) => x.toFixed(1)).join(' ')})`);
    console.table(table);
    console.log(`\nSeries statement, rollup against rows (naive), in-process, ${NAIVE_ROUNDS} alternating rounds`);
    console.table(naive);
    console.log(`plans: ${file}`);
  } finally {
    if (app) await app.close();
    await pool.end();
    await service.stop();
    if (before) await before.stop();
    if (process.env.BENCH_DROP === '1') {
      await dropNamedDatabase(DB);
      console.log(`dropped ${DB}`);
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
