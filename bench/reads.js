/* eslint-disable */
// Benchmark of the grid read engine and the capture queues (issue 4). Run: npm run build && node bench/reads.js
// Needs PostgreSQL on 127.0.0.1:5432 (BENCH_DATABASE_URL to change). Creates its own database, tm_bench_reads.
//
// 1. 1,000,000 ArchiverWarning rows (INSERT … SELECT generate_series) spread evenly over the last BENCH_SPAN_HOURS
//    (default 8: 125,000 rows in the default one-hour window; 2 puts 500,000 there).
// 2. The read with statistics over the newest 100000 rows of the default one-hour window, computed by
//    PostgreSQL (ReadEngine), side by side with loading those 100000 rows into the process and computing
//    the same statistics in JavaScript; alternated over several rounds after a warm-up, medians quoted.
// 3. The same read over HTTP with autocannon (p50 latency).
// 4. Enqueue cost (a bounded-queue push, and the full instrumentation call), and a flush of 20000 rows.
require('reflect-metadata');
const { Pool } = require('pg');
const autocannon = require('autocannon');
const { performance } = require('node:perf_hooks');
const { dropNamedDatabase } = require('./lib/service');

const SERVER = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const DB = 'tm_bench_reads';
const ROWS = Number(process.env.BENCH_ROWS || 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 15);
const SPAN_HOURS = Number(process.env.BENCH_SPAN_HOURS || 8);
const ONLY_GENERATE = process.env.BENCH_ONLY_GENERATE === '1';
const PASSWORD = 'Bench-Adm1nistrator!';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${x.toFixed(1)} ms`;

/**
 * The naive alternative: rows into the process, statistics in JavaScript. `fullRows` loads the
 * newest 100000 rows whole (what an ORM-style read does); otherwise only the statistics column
 * (the most generous version of the naive approach).
 */
async function naiveRead(pool, from, to, fullRows) {
  const [page, count, values] = await Promise.all([
    pool.query(
      `SELECT * FROM "ArchiverWarning" WHERE "CreatedDate" >= $1 AND "CreatedDate" <= $2 ORDER BY "CreatedDate" DESC, "Id" DESC LIMIT 100`,
      [from, to],
    ),
    pool.query(`SELECT count(*) FROM "ArchiverWarning" WHERE "CreatedDate" >= $1 AND "CreatedDate" <= $2`, [from, to]),
    pool.query(
      `SELECT ${fullRows ? '*, "DurationMicroseconds" AS v' : '"DurationMicroseconds" AS v'} FROM "ArchiverWarning" WHERE "CreatedDate" >= $1 AND "CreatedDate" <= $2
        ORDER BY "CreatedDate" DESC, "Id" DESC LIMIT 100000`,
      [from, to],
    ),
  ]);
  const xs = values.rows.map((r) => Number(r.v)).sort((a, b) => a - b);
  const n = xs.length;
  let sum = 0;
  for (const x of xs) sum += x;
  const mean = sum / n;
  let sq = 0;
  for (const x of xs) sq += (x - mean) ** 2;
  const min = xs[0];
  const max = xs[n - 1];
  const hist = new Array(10).fill(0);
  for (const x of xs) hist[max === min ? 0 : Math.min(9, Math.floor(((x - min) * 10) / (max - min)))]++;
  return { rows: page.rows.length, total: Number(count.rows[0].count), min, max, mean, median: median(xs), sd: Math.sqrt(sq / (n - 1)), hist };
}

async function main() {
  // BENCH_REUSE=1 keeps an existing database and its rows (for EXPLAIN between runs); BENCH_KEEP=1 leaves it behind.
  const admin = new Pool({ connectionString: SERVER, max: 1 });
  const exists = (await admin.query(`SELECT 1 FROM pg_database WHERE datname = $1`, [DB])).rowCount > 0;
  const reuse = exists && process.env.BENCH_REUSE === '1';
  if (!reuse) {
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${DB}`);
  }
  await admin.end();
  const url = new URL(SERVER);
  url.pathname = `/${DB}`;

  const { createApp } = require('../dist/bootstrap');
  const { loadSettings } = require('../dist/config/settings');
  const { resolveSecrets } = require('../dist/config/secrets');
  const { CaptureQueues } = require('../dist/telemetry/capture-queues.service');
  const { CaptureFlusher } = require('../dist/capture-queues/capture-flusher.service');
  const { BoundedQueue } = require('../dist/capture-queues/bounded-queue');
  const { PipelineTelemetry } = require('../dist/telemetry/pipeline-telemetry.service');

  const settings = resolveSecrets(
    loadSettings({
      ConnectionString: url.toString(),
      JwtKey: 'bench-jwt-key-0123456789abcdef0123456789abcdef',
      ApiHmacKey: 'bench-api-hmac-key-0123456789',
      DataDirectory: require('node:fs').mkdtempSync(require('node:path').join(require('node:os').tmpdir(), 'tm-bench-')),
      LogLevel: 'error',
      AdministratorInitialPassword: 'Administrator',
    }),
  );
  const app = await createApp(settings, { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
  const pool = new Pool({ connectionString: url.toString(), max: 4 });

  let t0 = performance.now();
  if (reuse) {
    // Move the kept rows so the newest is now again, as if just generated.
    await pool.query(`DELETE FROM "ArchiverWarning" WHERE "Instance" IS DISTINCT FROM 'bench'`);
    await pool.query(`UPDATE "ArchiverWarning" SET "CreatedDate" = "CreatedDate" + (now() - (SELECT max("CreatedDate") FROM "ArchiverWarning"))`);
  } else {
  console.log(`generating ${ROWS.toLocaleString()} ArchiverWarning rows…`);
  await pool.query(
    `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                    "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
     SELECT d, md5((g % 20)::text)::uuid, 'Model ' || (g % 20), md5(g::text)::uuid, 1 + g % 4,
            10000000 + (random() * random() * 30000000)::bigint, d, 'bench'
       FROM generate_series(1, $1::int) g, LATERAL (SELECT now() - (g * (($2::float8 * interval '1 hour') / $1::int)) AS d) x`,
    [ROWS, SPAN_HOURS],
  );
  }
  await pool.query(`VACUUM ANALYZE "ArchiverWarning"`);
  console.log(`generated and vacuumed in ${ms(performance.now() - t0)}`);

  if (ONLY_GENERATE) {
    await pool.end();
    await app.close();
    return;
  }
  // Sign in as the seeded landlord administrator (first sign-in sets the password).
  const signIn = await fetch(`${base}/api/Authentication/ByUserNamePassword`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userName: 'Administrator', password: 'Administrator', newPassword: PASSWORD, repeatNewPassword: PASSWORD }),
  });
  const { token } = await signIn.json();

  // The engine's answer is a stream now: read it over HTTP, as a client does.
  const engineRead = async (take) => {
    const res = await fetch(`${base}/api/ArchiverWarning?take=${take}`, { headers: { authorization: `Bearer ${token}` } });
    return res.text();
  };

  // Same answer both ways (a sanity check of the comparison, not a test).
  const check = JSON.parse(await engineRead(100));
  const naive = await naiveRead(pool, new Date(Date.now() - 3_600_000), new Date());
  console.log(`window total ${check.total.toLocaleString()} rows; statistics over ${check.statistics.durationMicroseconds.histogram.reduce((a, h) => a + h.frequency, 0)}`);
  console.log(`median: engine ${check.statistics.durationMicroseconds.median}, in-process ${naive.median}`);

  const results = { engine100: [], engineDefault: [], naive: [], naiveFull: [] };
  for (let round = -3; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? ['engine100', 'naive', 'naiveFull', 'engineDefault'] : ['naiveFull', 'naive', 'engineDefault', 'engine100'];
    for (const target of order) {
      // The 100000-row answer is slow to build; five measured rounds are enough for it.
      if (target === 'engineDefault' && round >= 5) continue;
      const start = performance.now();
      if (target === 'engine100') await engineRead(100);
      else if (target === 'engineDefault') await engineRead(100000);
      else await naiveRead(pool, new Date(Date.now() - 3_600_000), new Date(), target === 'naiveFull');
      if (round >= 0) results[target].push(performance.now() - start);
    }
  }

  const http = await autocannon({
    url: `${base}/api/ArchiverWarning?take=100`,
    headers: { authorization: `Bearer ${token}` },
    connections: 2,
    duration: 10,
  });

  // Enqueue: a plain push on a bounded queue, drained every 20000 like a flush would.
  const queue = new BoundedQueue(20000);
  const entry = { occurredDate: new Date(), modelGuid: 'x', modelName: 'm', entryGuid: null, stageId: 1, durationMicroseconds: 1 };
  const pushNs = [];
  for (let r = 0; r < 7; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 1_000_000; i++) {
      if (queue.depth === 20000) queue.drain();
      queue.enqueue(entry);
    }
    pushNs.push(Number(process.hrtime.bigint() - start) / 1_000_000);
  }
  // The full instrumentation call: counter, OpenTelemetry histogram, metric series (no warning).
  const telemetry = app.get(PipelineTelemetry);
  const queues = app.get(CaptureQueues);
  const callNs = [];
  for (let r = 0; r < 7; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 200_000; i++) telemetry.recordArchiverStage('6f9619ff-8b86-d011-b42d-00cf4fc964ff', 'Model', 1 + (i & 3), 500);
    callNs.push(Number(process.hrtime.bigint() - start) / 200_000);
  }

  // Flush of 20000 warning rows into the 1M-row table.
  const flusher = app.get(CaptureFlusher);
  await flusher.flush();
  const flushMs = [];
  for (let r = 0; r < 7; r++) {
    for (let i = 0; i < 20000; i++) {
      queues.archiverWarnings.enqueue({
        occurredDate: new Date(),
        modelGuid: '6f9619ff-8b86-d011-b42d-00cf4fc964ff',
        modelName: 'Model',
        entryGuid: '7f9619ff-8b86-d011-b42d-00cf4fc964ff',
        stageId: 1,
        durationMicroseconds: 12_000_000 + i,
      });
    }
    const start = performance.now();
    const report = await flusher.flush();
    if (!report.ok || report.written.ArchiverWarning !== 20000) throw new Error('flush did not write 20000 rows');
    flushMs.push(performance.now() - start);
  }

  const engine100 = median(results.engine100);
  const naiveMs = median(results.naive);
  const table = [
    ['measure', 'median', 'goal'],
    ['read + statistics in PostgreSQL, take=100 (ReadEngine)', ms(engine100), '≤ 100 ms'],
    ['read + statistics in PostgreSQL, take=100000 (default take)', ms(median(results.engineDefault)), ''],
    ['newest 100000 whole rows loaded, statistics in JavaScript', ms(median(results.naiveFull)), ''],
    ['ratio whole rows in-process / PostgreSQL (take=100)', `${(median(results.naiveFull) / engine100).toFixed(1)}×`, '≥ 5×'],
    ['statistics column only loaded, statistics in JavaScript', ms(naiveMs), ''],
    ['ratio column in-process / PostgreSQL (take=100)', `${(naiveMs / engine100).toFixed(1)}×`, '≥ 5×'],
    ['HTTP GET /api/ArchiverWarning?take=100, p50 (autocannon, 2 conn, 10 s)', `${http.latency.p50} ms`, ''],
    ['HTTP requests/s', `${Math.round(http.requests.average)}`, ''],
    ['enqueue (bounded queue push)', `${median(pushNs).toFixed(1)} ns`, '≤ 1 µs'],
    ['recordArchiverStage (counter + OTel histogram + series)', `${median(callNs).toFixed(0)} ns`, ''],
    ['flush of 20000 ArchiverWarning rows (+ health rows)', ms(median(flushMs)), '≤ 500 ms'],
  ];
  const widths = table[0].map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const [i, row] of table.entries()) {
    console.log(`| ${row.map((c, j) => c.padEnd(widths[j])).join(' | ')} |`);
    if (i === 0) console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  }
  console.log(`rounds: ${ROUNDS} after 3 warm-up (take=100000: 5); ${ROWS.toLocaleString()} rows over ${SPAN_HOURS} h, ${check.total.toLocaleString()} in the window`);

  await pool.end();
  await app.close();
  if (process.env.BENCH_KEEP !== '1') {
    await dropNamedDatabase(DB);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
