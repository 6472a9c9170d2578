/* eslint-disable */
// The upgrade of an existing install to partitioned tables (issue 20, contract 16), timed at BENCH_ROWS rows per table
// (default 10,000,000). Run: npm run build && node bench/partition-upgrade.js
// Needs PostgreSQL on 127.0.0.1:5432 (BENCH_DATABASE_URL to change). Creates its own database, tm_bench_partition_upgrade.
//
// 1. The schema of the version before partitioning (every migration before 1766100000000, the audit log's included), then BENCH_ROWS rows in
//    each table of BENCH_TABLES (default CaptureQueueHealth,UserLogin,ArchiverWarning: the narrowest, the audit trail with its triggers, the one with a rollup), spread over BENCH_SPAN_DAYS days (default 400),
//    then VACUUM ANALYZE (an install that has been running).
// 2. The conversion of each table, as the migrations do it (convertToPartitioned), step by step: the unique index
//    (Id, CreatedDate) built CONCURRENTLY, the CHECK validated, and the switch (the one transaction that locks the
//    table: rename, parent, ATTACH of the old table whole, DEFAULT and the partitions ahead).
// 3. Meanwhile a writer inserts one row every 20 ms into the table being converted, as a node still on the previous
//    version would: the longest time one of its inserts waited is printed (the switch is the only step that blocks it).
// 4. Proof that nothing was copied: the old table's storage file is the legacy partition's.
require('reflect-metadata');
const { Pool } = require('pg');
const { performance } = require('node:perf_hooks');
const { DataSource } = require('typeorm');
const { dropNamedDatabase, recreateNamedDatabase } = require('./lib/service');

const DB = 'tm_bench_partition_upgrade';
const ROWS = Number(process.env.BENCH_ROWS || 10_000_000);
const SPAN_DAYS = Number(process.env.BENCH_SPAN_DAYS || 400);
const TABLES = (process.env.BENCH_TABLES || 'CaptureQueueHealth,UserLogin,ArchiverWarning').split(',');

const INSERTS = {
  CaptureQueueHealth: `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance")
    SELECT 1 + i % 6, i % 20000, i % 7, now() - ($2::float8 * 86400 * i / $1) * interval '1 second', 'node-a' FROM generate_series(1, $1::int) i`,
  UserLogin: `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed", "FailureTypeId", "RemoteIp", "LocalIp", "UserAgent")
    SELECT now() - ($2::float8 * 86400 * i / $1) * interval '1 second', 'user' || (i % 5000), i % 5000, 1 + i % 3, 1, i % 10 = 0, CASE WHEN i % 10 = 0 THEN 1 END,
           '203.0.113.' || (i % 250), '10.0.0.5', 'Mozilla/5.0 bench ' || (i % 100) FROM generate_series(1, $1::int) i`,
  ArchiverWarning: `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
    SELECT d - interval '2 seconds', md5((i % 20)::text)::uuid, 'Model ' || (i % 20), 1 + i % 4, 10000 + i % 50000, d, 'node-' || (i % 3)
      FROM generate_series(1, $1::int) i, LATERAL (SELECT now() - ($2::float8 * 86400 * i / $1) * interval '1 second' AS d) x`,
  UserLogout: `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "RemoteIp")
    SELECT now() - ($2::float8 * 86400 * i / $1) * interval '1 second', 'user' || (i % 5000), i % 5000, 1 + i % 3, 1, 1, '203.0.113.' || (i % 250) FROM generate_series(1, $1::int) i`,
};
const WRITES = {
  CaptureQueueHealth: `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "Instance") VALUES (1, 0, 0, 'old-node')`,
  UserLogin: `INSERT INTO "UserLogin" ("CreatedUser", "RemoteIp") VALUES ('old-node', '203.0.113.1')`,
  UserLogout: `INSERT INTO "UserLogout" ("CreatedUser", "RemoteIp") VALUES ('old-node', '203.0.113.1')`,
  ArchiverWarning: `INSERT INTO "ArchiverWarning" ("StageId", "DurationMicroseconds", "Instance") VALUES (1, 1, 'old-node')`,
};

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;

async function main() {
  const url = await recreateNamedDatabase(DB);

  const { dataSourceOptions } = require('../dist/database/data-source');
  const { MIGRATIONS } = require('../dist/database/migrations');
  const { PARTITIONED_TABLES } = require('../dist/retention/partition-plan');
  const { convertToPartitioned } = require('../dist/database/migrations/partition-conversion.frozen');
  const before = MIGRATIONS.filter((m) => Number(/(\d{13})$/.exec(m.name)[1]) < 1766100000000);
  const dataSource = await new DataSource({ ...dataSourceOptions(url.toString(), 2), migrations: before }).initialize();
  await dataSource.runMigrations({ transaction: 'each' });

  const pool = new Pool({ connectionString: url.toString(), max: 3 });
  const [{ version }] = (await pool.query(`SELECT current_setting('server_version') AS version`)).rows;
  console.log(`PostgreSQL ${version}, ${ROWS.toLocaleString('en')} rows per table over ${SPAN_DAYS} days`);
  for (const table of TABLES) {
    const t0 = performance.now();
    // The history is loaded with triggers off (the superuser's session_replication_role): the audit
    // enqueue and the search-text trigger per row are most of a load's cost and not what is measured.
    // The conversion then runs with every trigger in place, as on a real install.
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(INSERTS[table], [ROWS, SPAN_DAYS]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await pool.query(`VACUUM ANALYZE "${table}"`);
    const [{ size }] = (await pool.query(`SELECT pg_size_pretty(pg_total_relation_size($1::regclass)) AS size`, [`"${table}"`])).rows;
    console.log(`${table}: ${ROWS.toLocaleString('en')} rows written in ${s(performance.now() - t0)} (${size} with indexes)`);
  }

  console.log('');
  console.log('| table | rows | unique index (Id, CreatedDate), CONCURRENTLY | CHECK validated | switch (table locked) | total | longest insert wait meanwhile | copied |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const name of TABLES) {
    const table = PARTITIONED_TABLES.find((t) => t.table === name);
    const [{ file }] = (await pool.query(`SELECT pg_relation_filenode($1::regclass)::text AS file`, [`"${name}"`])).rows;
    // A node on the previous version writing meanwhile.
    let writing = true;
    let longest = 0;
    let writes = 0;
    const writer = (async () => {
      while (writing) {
        const w0 = performance.now();
        await pool.query(WRITES[name]);
        longest = Math.max(longest, performance.now() - w0);
        writes++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const runner = dataSource.createQueryRunner();
    await runner.connect();
    await runner.query('SET statement_timeout = 0');
    const marks = {};
    const t0 = performance.now();
    let last = t0;
    await convertToPartitioned(runner, table, new Date(), (step) => {
      const now = performance.now();
      marks[step] = now - last;
      last = now;
    });
    const total = performance.now() - t0;
    await runner.release();
    writing = false;
    await writer;
    const [{ legacy }] = (await pool.query(`SELECT pg_relation_filenode($1::regclass)::text AS legacy`, [`"${name}_legacy"`])).rows;
    const [{ count }] = (await pool.query(`SELECT count(*)::bigint AS count FROM "${name}"`)).rows;
    console.log(
      `| ${name} | ${Number(count).toLocaleString('en')} | ${s(marks.index)} | ${s(marks.validate)} | ${s(marks.switch)} | ${s(total)} | ${(longest).toFixed(0)} ms (${writes} inserts) | ${legacy === file ? 'no (same storage file)' : 'YES'} |`,
    );
  }
  await pool.end();
  await dataSource.destroy();
  if (process.env.BENCH_KEEP !== '1') {
    await dropNamedDatabase(DB);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
