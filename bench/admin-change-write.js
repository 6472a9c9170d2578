'use strict';
/**
 * Issue 29: what a registry write costs with its AdminChange row (contract 18) against the same write
 * without it, in one run. Two compiled services side by side, each on its own database: the build
 * before AdminChange landed (BENCH_BEFORE, a checkout of 46d9662, the parent of the commit that added
 * migration AdminChange, after `npm run build`) and this build. The same two writes alternate between
 * the two over rounds after a warm-up, each request a real change (a different value every time, so
 * this build writes one AdminChange row per request, in the change's transaction, and enqueues it for
 * sealing):
 * - PUT  /api/TenantRegistry/:id          { name }    (a tenant renamed)
 * - PUT  /api/UserRegistry/:id            { email }   (a user's e-mail changed)
 * - POST /api/TenantRegistry              { name }    (a tenant created)
 * - POST /api/UserRegistry/:id/ApiKey     { name }    (an API key created)
 * Bearer JWT of the Administrator, 4 connections. The changes rotate over BENCH_ROWS tenants and users
 * (default 8): request n changes row n mod BENCH_ROWS, so the 4 requests in flight change 4 different
 * rows, as administrators do; BENCH_ROWS=1 puts all four on one row (the contended case: a
 * compare-and-set change then misses and retries, see docs/decisions/0034). BENCH_WRITES (comma-
 * separated names above, default all four) picks the writes. Reported per target: requests/s and the
 * service's CPU µs per request (medians), and after/before ratios of both. PostgreSQL's CPU is not split
 * per service here; the after/before ratio of requests/s includes it (both databases share the server).
 *
 * Run: npm run build && BENCH_BEFORE=/path/to/checkout-of-46d9662 node bench/admin-change-write.js [rounds]
 */
const lib = require('./lib/service');

const CONNECTIONS = 4;
const ROWS = Number(process.env.BENCH_ROWS ?? 8);
const KINDS = ['tenant rename', 'user e-mail', 'tenant create', 'API key create'];
const WRITES = process.env.BENCH_WRITES ? process.env.BENCH_WRITES.split(',').map((w) => w.trim()) : KINDS;

async function prepare(build) {
  const headers = { authorization: `Bearer ${build.credentials.token}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const res = await fetch(`${build.service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const tenantIds = [];
  const userIds = [];
  for (let i = 0; i < ROWS; i++) {
    const tenant = await post('/api/TenantRegistry', { name: `Bench Bank ${i}` });
    const role = await post('/api/RoleRegistry', { name: `Bench role ${i}`, tenantRegistryId: tenant.id, permissions: [35], active: true });
    const user = await post('/api/UserRegistry', { name: `bench-user-${i}`, roleRegistryId: role.id, active: true, password: 'Bench-User-Passw0rd!' });
    tenantIds.push(tenant.id);
    userIds.push(user.id);
  }
  return { headers, tenantIds, userIds };
}

/** The request number n of a write: method, path, body (each a real change or creation). */
function request(build, kind, n) {
  const { tenantIds, userIds } = build.ids;
  const row = n % ROWS;
  switch (kind) {
    case 'tenant rename':
      return { method: 'PUT', path: `/api/TenantRegistry/${tenantIds[row]}`, body: { name: `Bench Bank ${row} ${build.name} ${n}` } };
    case 'user e-mail':
      return { method: 'PUT', path: `/api/UserRegistry/${userIds[row]}`, body: { email: `bench${n}@example.com` } };
    case 'tenant create':
      return { method: 'POST', path: '/api/TenantRegistry', body: { name: `Bench new ${build.name} ${n}` } };
    case 'API key create':
      return { method: 'POST', path: `/api/UserRegistry/${userIds[row]}/ApiKey`, body: { name: `bench key ${n}` } };
    default:
      throw new Error(`unknown write ${kind}`);
  }
}

/** autocannon options for a write whose path and body differ on every request. */
function write(build, kind) {
  let n = 0;
  return {
    connections: CONNECTIONS,
    url: build.service.url,
    requests: [
      {
        headers: build.ids.headers,
        setupRequest: (req) => {
          n += 1;
          const { method, path, body } = request(build, kind, n);
          return { ...req, method, path, body: JSON.stringify(body) };
        },
      },
    ],
  };
}

async function main() {
  const before = process.env.BENCH_BEFORE;
  if (!before) throw new Error('BENCH_BEFORE must name the checkout of the build before AdminChange (46d9662), built');
  const rounds = Number(process.argv[2] ?? 7);
  const builds = [
    { name: 'before', root: before, port: 5931 },
    { name: 'after', root: undefined, port: 5932 },
  ];
  try {
    for (const build of builds) {
      build.db = await lib.createDatabase('admin_bench_write');
      build.service = await lib.startService({ ConnectionString: build.db.url, AuditSealInterval: 's/1' }, build.port, build.root);
      build.credentials = await lib.signInAdministrator(build.service.url);
      build.ids = await prepare(build);
    }
    const targets = [];
    for (const kind of WRITES) {
      for (const build of builds) targets.push({ name: `${build.name}: ${kind}`, build, kind, options: write(build, kind) });
    }
    const results = await lib.alternate(targets, { rounds, seconds: 4, warmup: 2, pidOf: (t) => t.build.service.pid });
    const rows = results.map((r) => ({
      target: r.name,
      'req/s': r.rps.toFixed(1),
      'service CPU µs/req': Math.round(r.cpuMicrosPerRequest),
      samples: r.samples.map((s) => s.toFixed(1)).join(' '),
      'non-2xx/errors': r.errors,
    }));
    lib.printTable(`Registry writes, ${CONNECTIONS} connections over ${ROWS} row(s), ${rounds} alternating 4 s rounds (medians)`, rows);
    const ratios = [];
    for (const kind of WRITES) {
      const b = results.find((r) => r.name === `before: ${kind}`);
      const a = results.find((r) => r.name === `after: ${kind}`);
      ratios.push({
        write: kind,
        'time per write after/before (req/s before/after)': (b.rps / a.rps).toFixed(2),
        'service CPU after/before': (a.cpuMicrosPerRequest / b.cpuMicrosPerRequest).toFixed(2),
      });
    }
    lib.printTable('Ratios (goal: ≤ 1.2)', ratios);
    const after = builds[1];
    const { Pool } = require('pg');
    const pool = new Pool({ connectionString: after.db.url, max: 1 });
    const [{ n }] = (await pool.query(`SELECT count(*)::int AS n FROM "AdminChange" WHERE NOT "Failed"`)).rows;
    await pool.end();
    console.log(`\nAdminChange rows written by the after build: ${n}`);
  } finally {
    for (const build of builds) {
      await build.service?.stop();
      await build.db?.drop();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
