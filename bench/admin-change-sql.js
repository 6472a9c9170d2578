'use strict';
/**
 * Issue 29: the SQL of one registry write (a tenant renamed, as PUT /api/TenantRegistry/:id runs it)
 * with and without its AdminChange row, through pg directly on a scratch database migrated by this
 * build (admin_bench_sql_*, dropped at the end), so nothing but the statements differs:
 * - before AdminChange: the previous build's statements: SELECT the tenant, then UPDATE … RETURNING
 *   (autocommit, no transaction);
 * - without the row: this build's transaction minus the insert: BEGIN, the service mark, SELECT … FOR
 *   UPDATE, UPDATE … RETURNING, COMMIT;
 * - with the row: the same plus the AdminChange INSERT (its enqueue and search-text triggers fire).
 * CLIENTS connections, each renaming its own tenant, alternating 4 s rounds after a warm-up; writes/s
 * and the database backends' CPU µs per write (from /proc), medians. Sealing is not in these figures
 * (bench/audit-seal-cpu.js gives its CPU per row).
 *
 * Run: npm run build && node bench/admin-change-sql.js [rounds]
 */
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Pool } = require('pg');
const lib = require('./lib/service');

const CLIENTS = 4;
const SECONDS = 4;
const SERVER_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const INSERT = `INSERT INTO "AdminChange" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "CredentialTypeId", "CredentialId",
  "ActionTypeId", "TargetTable", "TargetId", "TargetName", "TargetTenantRegistryId", "Failed", "Changes", "RemoteIp", "LocalIp", "UserAgent")
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

const VARIANTS = {
  'before AdminChange': async (client, id, name) => {
    await client.query(`SELECT "Id", "Name", "Landlord", "Active" FROM "TenantRegistry" WHERE "Id" = $1`, [id]);
    await client.query(`UPDATE "TenantRegistry" SET "Name" = $2 WHERE "Id" = $1 RETURNING "Id", "Name", "Landlord", "Active"`, [id, name]);
  },
  'without the row': async (client, id, name) => {
    await client.query('START TRANSACTION');
    await client.query(`SELECT set_config('app.admin_change', 'service', true)`);
    await client.query(`SELECT "Id", "Name", "Landlord", "Active" FROM "TenantRegistry" WHERE "Id" = $1 FOR UPDATE`, [id]);
    await client.query(`UPDATE "TenantRegistry" SET "Name" = $2 WHERE "Id" = $1 RETURNING "Id", "Name", "Landlord", "Active"`, [id, name]);
    await client.query('COMMIT');
  },
  'with the row': async (client, id, name, previous) => {
    await client.query('START TRANSACTION');
    await client.query(`SELECT set_config('app.admin_change', 'service', true)`);
    await client.query(`SELECT "Id", "Name", "Landlord", "Active" FROM "TenantRegistry" WHERE "Id" = $1 FOR UPDATE`, [id]);
    await client.query(`UPDATE "TenantRegistry" SET "Name" = $2 WHERE "Id" = $1 RETURNING "Id", "Name", "Landlord", "Active"`, [id, name]);
    await client.query(INSERT, [
      new Date(), 'Administrator', 1, 1, 2, '7d1f0c1e-2a3b-4c5d-8e9f-0a1b2c3d4e5f', 2, 'TenantRegistry', String(id), name, id, false,
      `{"name":[${JSON.stringify(previous)},${JSON.stringify(name)}]}`, '127.0.0.1', '127.0.0.1', 'bench/admin-change-sql',
    ]);
    await client.query('COMMIT');
  },
};

async function backendPids(pool, database, exclude) {
  const { rows } = await pool.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> $2`, [database, exclude]);
  return rows.map((r) => r.pid);
}

async function round(clients, tenants, variant, seconds) {
  const end = Date.now() + seconds * 1000;
  let writes = 0;
  await Promise.all(
    clients.map(async (client, i) => {
      let n = 0;
      let previous = `Bench ${i}`;
      while (Date.now() < end) {
        const name = `Bench ${i} ${variant} ${++n}`;
        await VARIANTS[variant](client, tenants[i], name, previous);
        previous = name;
        writes += 1;
      }
    }),
  );
  return writes;
}

async function main() {
  const rounds = Number(process.argv[2] ?? 7);
  const name = `admin_bench_sql_${randomBytes(3).toString('hex')}`;
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: CLIENTS + 1 });
  try {
    const { DataSource } = require('typeorm');
    const { dataSourceOptions, migrate } = require(join(__dirname, '..', 'dist', 'database', 'data-source.js'));
    const dataSource = await new DataSource({ ...dataSourceOptions(url.toString(), 1) }).initialize();
    await migrate(dataSource);
    await dataSource.destroy();
    const tenants = [];
    for (let i = 0; i < CLIENTS; i++) {
      const { rows } = await pool.query(`INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ($1, false, true) RETURNING "Id"`, [`Bench ${i}`]);
      tenants.push(rows[0].Id);
    }
    const clients = [];
    for (let i = 0; i < CLIENTS; i++) clients.push(await pool.connect());
    const monitor = await pool.connect();
    const [{ pid: own }] = (await monitor.query('SELECT pg_backend_pid() AS pid')).rows;
    const pids = await backendPids(monitor, name, own);
    const cpu = () => pids.reduce((sum, pid) => sum + lib.processCpuMs(pid), 0);

    const names = Object.keys(VARIANTS);
    for (const variant of names) await round(clients, tenants, variant, 2);
    const samples = Object.fromEntries(names.map((v) => [v, { rate: [], cpu: [] }]));
    for (let r = 0; r < rounds; r++) {
      for (const variant of r % 2 ? [...names].reverse() : names) {
        const cpu0 = cpu();
        const writes = await round(clients, tenants, variant, SECONDS);
        samples[variant].rate.push(writes / SECONDS);
        samples[variant].cpu.push(((cpu() - cpu0) * 1000) / writes);
      }
    }
    for (const c of [...clients, monitor]) c.release();
    const base = lib.median(samples['before AdminChange'].rate);
    const without = lib.median(samples['without the row'].rate);
    const baseCpu = lib.median(samples['before AdminChange'].cpu);
    const withoutCpu = lib.median(samples['without the row'].cpu);
    lib.printTable(`A tenant renamed, SQL only, ${CLIENTS} connections, ${rounds} alternating ${SECONDS} s rounds (medians)`, names.map((v) => ({
      statements: v,
      'writes/s': lib.median(samples[v].rate).toFixed(0),
      'PostgreSQL CPU µs/write': Math.round(lib.median(samples[v].cpu)),
      'time/write vs before': (base / lib.median(samples[v].rate)).toFixed(2),
      'time/write vs without the row': (without / lib.median(samples[v].rate)).toFixed(2),
      'CPU vs before': (lib.median(samples[v].cpu) / baseCpu).toFixed(2),
      'CPU vs without the row': (lib.median(samples[v].cpu) / withoutCpu).toFixed(2),
      samples: samples[v].rate.map((s) => s.toFixed(0)).join(' '),
    })));
  } finally {
    await pool.end();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
