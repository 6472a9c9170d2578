/* eslint-disable */
// The streamed default answer (issue 12). Run: npm run build && node bench/stream.js
//
// 1,000,000 ArchiverWarning rows over BENCH_SPAN_HOURS (default 14: ≈ 71,000 rows in the default
// one-hour window, the harness) in a dedicated database, the compiled service as its own
// process. Alternating, after a warm-up, BENCH_ROUNDS rounds of:
//   - the default answer over HTTP (GET /api/ArchiverWarning, body read whole): latency, time to
//     first byte, service CPU per answer; also with Accept-Encoding gzip and br (bytes vs CPU);
//   - a grid page (take=100);
//   - the naive way, in this process: the rows loaded through node-postgres, count and statistics
//     computed in JavaScript, the same JSON document built with JSON.stringify (checked equal once);
//   - with BENCH_BEFORE=<checkout with dist/> the same default answer from that build too (and its memory).
// Then the memory benchmark: the service's RSS (VmRSS, sampled every 5 ms) before and during 10
// concurrent default reads, against the size of one answer.
// The database is dropped at the end.
const { Pool } = require('pg');
const { readFileSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
const { createDatabase, startService, signInAdministrator, median, printTable } = require('./lib/service');

const ROWS = Number(process.env.BENCH_ROWS || 1_000_000);
const SPAN_HOURS = Number(process.env.BENCH_SPAN_HOURS || 14);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 7);
const STAGES = { 1: 'BuildArchiveJson', 2: 'CaseCreationDispatch', 3: 'RdbmsArchiveWrite', 4: 'BulkCopyArchiveBuffer' };
const CLOCK_TICKS = 100;

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
};
const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const ms = (x) => `${x.toFixed(1)} ms`;
const mb = (x) => `${(x / 1e6).toFixed(1)} MB`;

/** One HTTP read, body taken whole: total time, time to first byte, bytes on the wire. */
async function httpRead(url, token, encoding) {
  const { request } = require('node:http');
  const start = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': encoding } }, (res) => {
      let first = 0;
      let bytes = 0;
      res.on('data', (chunk) => {
        if (!first) first = performance.now() - start;
        bytes += chunk.length;
      });
      res.on('end', () => resolve({ ms: performance.now() - start, ttfb: first, bytes, status: res.statusCode }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** The naive way: rows into the process, statistics in JavaScript, the same JSON built with JSON.stringify. */
async function naiveAnswer(pool, from, to) {
  const where = `FROM "ArchiverWarning" WHERE "CreatedDate" >= $1 AND "CreatedDate" <= $2`;
  const [rows, count] = await Promise.all([
    pool.query(`SELECT * ${where} ORDER BY "CreatedDate" DESC, "Id" DESC LIMIT 100000`, [from, to]),
    pool.query(`SELECT count(*) ${where}`, [from, to]),
  ]);
  const xs = rows.rows.map((r) => Number(r.DurationMicroseconds)).sort((a, b) => a - b);
  const n = xs.length;
  let statistics = { min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] };
  if (n > 0) {
    let sum = 0;
    for (const x of xs) sum += x;
    const mean = sum / n;
    let sq = 0;
    for (const x of xs) sq += (x - mean) ** 2;
    const min = xs[0];
    const max = xs[n - 1];
    const width = (max - min) / 10;
    const hist = new Array(10).fill(0);
    for (const x of xs) hist[max === min ? 0 : Math.min(9, Math.floor(((x - min) * 10) / (max - min)))]++;
    statistics = {
      min,
      max,
      mean,
      median: n % 2 ? xs[(n - 1) / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2,
      standardDeviation: n > 1 ? Math.sqrt(sq / (n - 1)) : 0,
      histogram: hist.map((frequency, b) => ({ from: min + width * b, to: b === 9 ? max : min + width * (b + 1), frequency })),
    };
  }
  const body = JSON.stringify({
    statistics: { durationMicroseconds: statistics },
    total: Number(count.rows[0].count),
    rows: rows.rows.map((r) => ({
      id: Number(r.Id),
      occurredDate: r.OccurredDate.toISOString(),
      entityAnalysisModelGuid: r.EntityAnalysisModelGuid,
      entityAnalysisModelName: r.EntityAnalysisModelName,
      entityAnalysisModelInstanceEntryGuid: r.EntityAnalysisModelInstanceEntryGuid,
      stageId: r.StageId,
      stageName: STAGES[r.StageId] ?? null,
      durationMicroseconds: Number(r.DurationMicroseconds),
      createdDate: r.CreatedDate.toISOString(),
      instance: r.Instance,
    })),
  });
  return Buffer.from(body);
}

async function main() {
  const db = await createDatabase('tm_bench_stream');
  const services = [];
  const pool = new Pool({ connectionString: db.url, max: 4 });
  try {
    const service = await startService({ ConnectionString: db.url }, 47_000 + Math.floor(Math.random() * 1000));
    services.push(service);
    let before = null;
    if (process.env.BENCH_BEFORE) {
      before = await startService({ ConnectionString: db.url }, 48_000 + Math.floor(Math.random() * 1000), process.env.BENCH_BEFORE);
      services.push(before);
    }
    const { token } = await signInAdministrator(service.url);
    const beforeToken = before ? (await signInAdministrator(before.url)).token : null;

    let t0 = performance.now();
    // Millisecond dates, so the naive way's Date objects carry the same values as the answer.
    await pool.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                      "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT d, md5((g % 20)::text)::uuid, 'Model ' || (g % 20), md5(g::text)::uuid, 1 + g % 4,
              10000000 + (random() * random() * 30000000)::bigint, d, 'bench'
         FROM generate_series(1, $1::int) g,
              LATERAL (SELECT date_trunc('milliseconds', now() - (g * (($2::float8 * interval '1 hour') / $1::int))) AS d) x`,
      [ROWS, SPAN_HOURS],
    );
    await pool.query(`VACUUM ANALYZE "ArchiverWarning"`);
    console.log(`${ROWS.toLocaleString()} rows over ${SPAN_HOURS} h generated and vacuumed in ${ms(performance.now() - t0)}`);

    const url = `${service.url}/api/ArchiverWarning`;
    const window = () => [new Date(Date.now() - 3_600_000), new Date()];
    // The same document both ways (a check of the comparison, not a test).
    const served = JSON.parse(Buffer.from(await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()).toString());
    const naive = JSON.parse((await naiveAnswer(pool, ...window())).toString());
    const same =
      JSON.stringify(served.rows.slice(0, 1000)) === JSON.stringify(naive.rows.slice(0, 1000)) &&
      served.statistics.durationMicroseconds.histogram.length === 10 &&
      Math.abs(served.total - naive.total) < 200;
    console.log(`window: ${served.total.toLocaleString()} rows; naive JSON matches the answer: ${same}`);

    const targets = {
      'service, default answer (identity)': () => httpRead(url, token, 'identity'),
      'service, default answer (gzip)': () => httpRead(url, token, 'gzip'),
      'service, default answer (br)': () => httpRead(url, token, 'br'),
      'service, grid page take=100': () => httpRead(`${url}?take=100`, token, 'identity'),
      // What the grid pages send by default (web/assets/grid-page.js: take=1000) with a browser's Accept-Encoding.
      'service, page default take=1000 (browser: br)': () => httpRead(`${url}?take=1000`, token, 'gzip, deflate, br, zstd'),
      'naive: rows loaded, statistics in JS, JSON.stringify': async () => {
        const start = performance.now();
        const body = await naiveAnswer(pool, ...window());
        return { ms: performance.now() - start, ttfb: NaN, bytes: body.length };
      },
    };
    if (before) targets['before (BENCH_BEFORE build), default answer'] = () => httpRead(url.replace(service.url, before.url), beforeToken, 'identity');
    const results = Object.fromEntries(Object.keys(targets).map((k) => [k, []]));
    const names = Object.keys(targets);
    for (let round = -2; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const name of order) {
        const pid = name.startsWith('before') ? before.pid : service.pid;
        const cpu0 = cpuMs(pid);
        const r = await targets[name]();
        const cpu = name.startsWith('naive') ? NaN : cpuMs(pid) - cpu0;
        if (round >= 0) results[name].push({ ...r, cpu });
      }
    }
    const identity = median(results['service, default answer (identity)'].map((r) => r.ms));
    const naiveMs = median(results['naive: rows loaded, statistics in JS, JSON.stringify'].map((r) => r.ms));
    printTable(
      `Default answer and page, ${ROUNDS} alternating rounds after 2 warm-up, medians (${served.total.toLocaleString()} rows in the window)`,
      names.map((name) => ({
        target: name,
        p50: ms(median(results[name].map((r) => r.ms))),
        'first byte p50': name.startsWith('naive') ? '' : ms(median(results[name].map((r) => r.ttfb))),
        'bytes on the wire': mb(median(results[name].map((r) => r.bytes))),
        'service CPU per answer': name.startsWith('naive') ? '' : ms(median(results[name].map((r) => r.cpu))),
        samples: results[name].map((r) => Math.round(r.ms)).join(' '),
      })),
    );
    console.log(`naive / streamed (identity): ${(naiveMs / identity).toFixed(2)}x`);

    // Memory: 10 concurrent default reads against one answer's size.
    for (const [label, target, bearer] of [['streamed', service, token], ...(before ? [['before (BENCH_BEFORE build)', before, beforeToken]] : [])]) {
      const answerBytes = (await httpRead(`${target.url}/api/ArchiverWarning`, bearer, 'identity')).bytes;
      const growth = [];
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 1000));
        if (global.gc) global.gc();
        const base = rssMb(target.pid);
        let peak = base;
        const sampler = setInterval(() => (peak = Math.max(peak, rssMb(target.pid))), 5);
        await Promise.all(Array.from({ length: 10 }, () => httpRead(`${target.url}/api/ArchiverWarning`, bearer, 'identity')));
        clearInterval(sampler);
        growth.push({ base, peak });
      }
      printTable(`RSS of the service (${label}) during 10 concurrent default reads; one answer is ${mb(answerBytes)}`, growth.map((g, i) => ({
        round: i + 1,
        'RSS before': `${g.base.toFixed(0)} MB`,
        'RSS peak': `${g.peak.toFixed(0)} MB`,
        growth: `${(g.peak - g.base).toFixed(0)} MB`,
        'growth / one answer': `${(((g.peak - g.base) * 1024 * 1024) / answerBytes).toFixed(2)}x`,
      })));
    }
  } finally {
    await pool.end();
    for (const s of services) await s.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
