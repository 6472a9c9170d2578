'use strict';
/**
 * Issue 29 (contract 18): the check for rows outside the log at 10M rows per audit table. In a scratch
 * database (admin_bench_outside_*, dropped at the end unless BENCH_KEEP=1) migrated by this build:
 * ROWS rows in each of UserLogin, UserLogout and AdminChange (generate_series, dated over the current
 * month, inserted as the superuser with triggers off, not through the API), each with its leaf in
 * AuditLeaf (so 3 × ROWS leaves), except OUTSIDE rows per table left without one (slipped past the
 * triggers). Then VACUUM (ANALYZE), which the insert-driven autovacuum does on its own on these
 * append-only tables (migration AppendOnlyAutovacuum): the check reads the indexes only where the
 * visibility map says so.
 *
 * Measured, with the compiled service started on that database (exactly what `npm start` runs):
 * - GET /api/Audit/Outside, ROUNDS times: wall time (goal ≤ 10 s), and the CPU it costs, service
 *   process plus the database's backends (from /proc), from which the hourly check's share of one core;
 * - inserts while the check runs: a UserLogin INSERT every 20 ms on another connection, its latency
 *   during the checks against the same without a check running (a lock would show as an insert waiting
 *   for the whole check);
 * - EXPLAIN (ANALYZE, BUFFERS) of the check's statement, printed.
 *
 * Run: npm run build && node bench/audit-outside-scale.js [rows per table, default 10000000] [rounds, default 3]
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Pool } = require('pg');
const lib = require('./lib/service');
const { DataSource } = require('typeorm');

const ROWS = Number(process.argv[2] ?? 10_000_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const OUTSIDE = 3;
const TABLES = ['UserLogin', 'UserLogout', 'AdminChange'];
const SERVER_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const log = (line) => console.log(`${new Date().toISOString().slice(11, 19)} ${line} (load ${load()})`);

function cpuMs(pid) {
  try {
    return lib.processCpuMs(pid);
  } catch {
    return 0;
  }
}

async function backendsCpu(pool, database, exclude) {
  const { rows } = await pool.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> ALL($2::int[])`, [database, exclude]);
  const cpu = new Map();
  for (const { pid } of rows) cpu.set(pid, cpuMs(pid));
  return cpu;
}

const INSERTS = {
  UserLogin: (n) => `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed", "RemoteIp", "LocalIp", "UserAgent")
    SELECT date_trunc('month', now()) + (now() - date_trunc('month', now())) * (g::float8 / ${n}), 'bulk-' || (g % 5000), g % 5000, 1, 1, g % 7 = 0,
           '198.51.100.' || (g % 250), '10.0.0.5', 'bench/audit-outside'
      FROM generate_series(1, ${n}) g`,
  UserLogout: (n) => `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "RemoteIp", "UserAgent")
    SELECT date_trunc('month', now()) + (now() - date_trunc('month', now())) * (g::float8 / ${n}), 'bulk-' || (g % 5000), g % 5000, 1, 1, 1,
           '198.51.100.' || (g % 250), 'bench/audit-outside'
      FROM generate_series(1, ${n}) g`,
  AdminChange: (n) => `INSERT INTO "AdminChange" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "CredentialTypeId", "CredentialId", "ActionTypeId",
                                                  "TargetTable", "TargetId", "TargetName", "TargetTenantRegistryId", "Failed", "Changes", "RemoteIp", "UserAgent")
    SELECT date_trunc('month', now()) + (now() - date_trunc('month', now())) * (g::float8 / ${n}), 'admin-' || (g % 50), g % 50, 1, 3,
           '7d1f0c1e-2a3b-4c5d-8e9f-0a1b2c3d4e5f', 6, 'UserRegistry', g % 5000, 'user-' || (g % 5000), 1, false,
           '{"email":["a' || g || '@example.com","b' || g || '@example.com"]}', '198.51.100.' || (g % 250), 'bench/audit-outside'
      FROM generate_series(1, ${n}) g`,
};

async function build(url) {
  const pool = new Pool({ connectionString: url, max: 1 });
  const client = await pool.connect();
  try {
    await client.query(`SET session_replication_role = replica`);
    await client.query(`SET maintenance_work_mem = '512MB'`);
    await client.query(`SET synchronous_commit = off`);
    let first = 0;
    for (const table of TABLES) {
      let t0 = Date.now();
      await client.query(INSERTS[table](ROWS));
      log(`${table}: ${ROWS} rows in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      t0 = Date.now();
      // Every row a leaf but the OUTSIDE newest, which are left outside the log. The hashes are not
      // what the check reads (it reads TableName and RowId), so they are a cheap stand-in.
      await client.query(
        `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
         SELECT $1::bigint + row_number() OVER (ORDER BY t."Id") - 1, $2, t."Id", t."CreatedDate",
                decode(md5(t."Id"::text) || md5(t."Id"::text), 'hex'), decode(md5(t."Id"::text || 'l') || md5(t."Id"::text || 'l'), 'hex'), now()
           FROM "${table}" t WHERE t."Id" <= (SELECT max("Id") FROM "${table}") - ${OUTSIDE}`,
        [first, table],
      );
      first += ROWS - OUTSIDE;
      log(`AuditLeaf: ${ROWS - OUTSIDE} leaves of ${table} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
    // The checkpoint that would sign those leaves (as bench/audit-seal.js does): the check takes leaves
    // at or above the latest checkpoint's size as stray (written by hand, outside the signed tree), and
    // without it would name every row under them. Not a signed note: the verifier is not run here.
    await client.query(`INSERT INTO "AuditCheckpoint" ("TreeSize", "RootHash", "CreatedDate", "Note") VALUES ($1, $2, now(), 'bench: not a signed note')`, [
      first,
      randomBytes(32),
    ]);
    const t0 = Date.now();
    for (const table of [...TABLES, 'AuditLeaf']) await client.query(`VACUUM (ANALYZE) "${table}"`);
    log(`VACUUM (ANALYZE) of the four tables in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  } finally {
    client.release();
    await pool.end();
  }
}

/** A UserLogin INSERT every 20 ms until `stop()`: the latencies, ms. */
function inserter(pool) {
  const latencies = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = process.hrtime.bigint();
      await pool.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed") VALUES ('during-check', 1, false)`);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      await sleep(20);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return latencies;
    },
  };
}

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};

async function main() {
  // BENCH_REUSE=<name>: measure a database an earlier BENCH_BUILD_ONLY=1 run built (and kept), no build.
  const reuse = process.env.BENCH_REUSE;
  if (reuse !== undefined && !/^admin_bench_outside_[0-9a-f]{6}$/.test(reuse)) throw new Error('BENCH_REUSE: a name admin_bench_outside_xxxxxx');
  const name = reuse ?? `admin_bench_outside_${randomBytes(3).toString('hex')}`;
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  if (!reuse) await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  let service;
  try {

    const { dataSourceOptions, migrate } = require(join(__dirname, '..', 'dist', 'database', 'data-source.js'));
    const { summarySql, OUTSIDE_SLICE_IDS } = require(join(__dirname, '..', 'dist', 'audit-outside', 'audit-outside.repository.js'));
    if (!reuse) {
      const dataSource = await new DataSource({ ...dataSourceOptions(dbUrl, 1) }).initialize();
      await migrate(dataSource);
      await dataSource.destroy();
      log(`migrated ${name}; building ${ROWS} rows per table`);
      await build(dbUrl);
    }
    if (process.env.BENCH_BUILD_ONLY === '1') {
      log(`built ${name} and kept it; measure with BENCH_REUSE=${name}`);
      return;
    }

    // The check as the service runs it, directly, twice in one process: the first reads every leaf
    // (nothing kept yet: the check at start after a restart), the second only the leaves since.
    {
      const { AuditOutsideRepository } = require(join(__dirname, '..', 'dist', 'audit-outside', 'audit-outside.repository.js'));
      const ds = await new DataSource({ ...dataSourceOptions(dbUrl, 2) }).initialize();
      const repo = new AuditOutsideRepository(ds);
      for (const pass of ['first check (every leaf read)', 'second check (leaves since)']) {
        const t0 = Date.now();
        const { total } = await repo.find(600_000);
        log(`${pass}: ${Date.now() - t0} ms, ${total} rows outside`);
      }
      await ds.destroy();
    }

    // The hourly job runs at start too: its first run is part of the start, not of the measures below.
    // The sealer stays idle (an hour's interval): the stand-in leaves have no checkpoint it could extend.
    service = await lib.startService({ ConnectionString: dbUrl, AuditSealInterval: 'h/1' }, 5351);
    const { token } = await lib.signInAdministrator(service.url);
    const pool = new Pool({ connectionString: dbUrl, max: 2 });
    const [{ pid: own }] = (await pool.query('SELECT pg_backend_pid() AS pid')).rows;
    // Let the check at start finish (it reads every leaf once) before measuring the route.
    await sleep(Number(process.env.BENCH_SETTLE_MS ?? 3000));

    // Inserts with no check running, for comparison.
    const idle = inserter(pool);
    await sleep(5000);
    const idleLatencies = await idle.stop();

    const rounds = [];
    const duringLatencies = [];
    for (let r = 0; r < ROUNDS; r++) {
      const ins = inserter(pool);
      const service0 = cpuMs(service.pid);
      const pg0 = await backendsCpu(pool, name, [own]);
      const t0 = Date.now();
      const res = await fetch(`${service.url}/api/Audit/Outside`, { headers: { authorization: `Bearer ${token}` } });
      const body = await res.json();
      const wall = Date.now() - t0;
      const service1 = cpuMs(service.pid);
      const pg1 = await backendsCpu(pool, name, [own]);
      duringLatencies.push(...(await ins.stop()));
      let pg = 0;
      for (const [pid, after] of pg1) pg += after - (pg0.get(pid) ?? 0);
      rounds.push({ status: res.status, total: body.total, wall, service: service1 - service0, pg });
      log(`check ${r + 1}: ${res.status}, total ${body.total}, ${wall} ms; CPU service ${(service1 - service0).toFixed(0)} ms, PostgreSQL ${pg.toFixed(0)} ms`);
      await sleep(2000);
    }

    const explainClient = await pool.connect();
    try {
      // The check's summary of one range (its first step, and most of its work at any size), UserLogin's first range.
      const [{ lo }] = (await explainClient.query(`SELECT min("Id")::text AS lo FROM "UserLogin"`)).rows;
      const hi = (BigInt(lo) + OUTSIDE_SLICE_IDS - 1n).toString();
      const { rows } = await explainClient.query(`EXPLAIN (ANALYZE, BUFFERS) ${summarySql('UserLogin', false)}`, ['UserLogin', lo, hi, '12345', '-1']);
      console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of one summary of the check (UserLogin, Ids ${lo} to ${hi}) at ${ROWS} rows per table:`);
      console.log(rows.map((r) => r['QUERY PLAN']).join('\n'));
    } finally {
      explainClient.release();
    }
    await pool.end();

    const wall = lib.median(rounds.map((r) => r.wall));
    const cpu = lib.median(rounds.map((r) => r.service + r.pg));
    lib.printTable(`The check for rows outside the log, ${ROWS} rows per table (${TABLES.join(', ')}), ${OUTSIDE} per table outside; ${ROUNDS} rounds, medians; load ${load()}`, [
      {
        'wall ms': wall,
        'service CPU ms': Math.round(lib.median(rounds.map((r) => r.service))),
        'PostgreSQL CPU ms': Math.round(lib.median(rounds.map((r) => r.pg))),
        'hourly share of one core': `${((cpu / 3_600_000) * 100).toFixed(3)} %`,
        'rows found': rounds.map((r) => r.total).join(' '),
        'wall samples': rounds.map((r) => r.wall).join(' '),
      },
    ]);
    lib.printTable('A UserLogin INSERT every 20 ms on another connection (latency ms)', [
      { when: 'no check running', inserts: idleLatencies.length, median: quantile(idleLatencies, 0.5).toFixed(1), p99: quantile(idleLatencies, 0.99).toFixed(1), max: Math.max(...idleLatencies).toFixed(1) },
      { when: 'during the checks', inserts: duringLatencies.length, median: quantile(duringLatencies, 0.5).toFixed(1), p99: quantile(duringLatencies, 0.99).toFixed(1), max: Math.max(...duringLatencies).toFixed(1) },
    ]);
  } finally {
    await service?.stop();
    if (process.env.BENCH_KEEP !== '1' && process.env.BENCH_BUILD_ONLY !== '1') {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      log(`dropped ${name}`);
    }
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
