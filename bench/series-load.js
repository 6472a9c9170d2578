/* eslint-disable */
// Loads the dense telemetry database of issue 21 once, for bench/series.js (which reuses it, and drops it
// with BENCH_DROP=1). Run: npm run build && node bench/series-load.js
//
// 10,000,000 ArchiverWarning rows over 14 hours (≈ 714,000 an hour), made with INSERT … SELECT
// generate_series, oldest first (heap in date order, as an append-only table is), the secondary indexes
// dropped during the load and built once after it, then VACUUM ANALYZE. The 14 hours run from 12 hours
// before the load to 2 hours after it, so that the default window (the last hour) stays full at the
// issue's density for the two hours the measurements may take; rows "from the future" lie outside every
// window measured and are never read. 20 models, 4 stages, 3 instances (node-0..2).
const { Pool } = require('pg');
const { performance } = require('node:perf_hooks');
const { join } = require('node:path');
const { recreateNamedDatabase, startService } = require('./lib/service');

const DB = process.env.BENCH_DB || 'tm_bench_series';
const ROWS = Number(process.env.BENCH_ROWS || 10_000_000);
const SPAN_HOURS = 14;
const AHEAD_HOURS = Number(process.env.BENCH_AHEAD_HOURS || 2);
const ROOT = process.env.BENCH_ROOT || join(__dirname, '..');

async function main() {
  const url = await recreateNamedDatabase(DB);
  // The service migrates the empty database, then stops: the rows go in without it.
  const service = await startService({ ConnectionString: url.toString() }, 46_000 + Math.floor(Math.random() * 1000), ROOT);
  await service.stop();

  const pool = new Pool({ connectionString: url.toString(), max: 1 });
  const t0 = performance.now();
  const { rows: indexes } = await pool.query(
    `SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'ArchiverWarning' AND indexname NOT LIKE '%pkey'`,
  );
  for (const r of indexes) await pool.query(`DROP INDEX "${r.indexname}"`);
  const anchor = (await pool.query(`SELECT now() + make_interval(hours => $1) AS a`, [AHEAD_HOURS])).rows[0].a;
  const step = 1_000_000;
  for (let hi = ROWS; hi > 0; hi -= step) {
    const lo = Math.max(0, hi - step);
    await pool.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                      "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT d - interval '2 seconds', md5((g % 20)::text)::uuid, 'Model ' || (g % 20), md5(g::text)::uuid, 1 + g % 4,
              10000000 + (random() * random() * 30000000)::bigint, d, 'node-' || (g % 3)
         FROM generate_series($2::int - 1, $1::int, -1) g,
              LATERAL (SELECT $3::timestamptz - (g * (interval '${SPAN_HOURS} hours' / $4::int)) AS d) x`,
      [lo, hi, anchor, ROWS],
    );
    console.log(`  ${(ROWS - lo).toLocaleString()} rows, ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  }
  await pool.query(`SET maintenance_work_mem = '512MB'`);
  for (const r of indexes) {
    const t1 = performance.now();
    await pool.query(r.indexdef);
    console.log(`  ${r.indexname}: ${((performance.now() - t1) / 1000).toFixed(0)} s`);
  }
  await pool.query(`VACUUM ANALYZE "ArchiverWarning"`);
  console.log(`${ROWS.toLocaleString()} rows loaded, indexed and vacuumed in ${((performance.now() - t0) / 1000).toFixed(0)} s; kept in ${DB}`);
  await pool.end();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
