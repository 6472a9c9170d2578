'use strict';
/**
 * Issue 29: what a registry write costs with its AdminChange row (contract 18) against the same write
 * without it, in one run. Two compiled services side by side, each on its own database: the build
 * before AdminChange landed (BENCH_BEFORE, a checkout of 46d9662, the parent of the commit that added
 * migration AdminChange, after `npm run build`) and this build. The same two writes alternate between
 * the two over rounds after a warm-up, each request a real change (a different value every time, so
 * this build writes one AdminChange row per request, in the change's transaction, and enqueues it for
 * sealing):
 * - PUT /api/TenantRegistry/:id  { name }            (a tenant renamed)
 * - PUT /api/UserRegistry/:id    { email }           (a user's e-mail changed)
 * Bearer JWT of the Administrator, 4 connections. Reported per target: requests/s and the service's
 * CPU µs per request (medians), and after/before ratios of both. PostgreSQL's CPU is not split per
 * service here; the after/before ratio of requests/s includes it (both databases share the server).
 *
 * Run: npm run build && BENCH_BEFORE=/path/to/checkout-of-46d9662 node bench/admin-change-write.js [rounds]
 */
const lib = require('./lib/service');

const CONNECTIONS = 4;

async function prepare(build) {
  const headers = { authorization: `Bearer ${build.credentials.token}`, 'content-type': 'application/json' };
  const post = async (path, body) => {
    const res = await fetch(`${build.service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const tenant = await post('/api/TenantRegistry', { name: 'Bench Bank' });
  const role = await post('/api/RoleRegistry', { name: 'Bench role', tenantRegistryId: tenant.id, permissions: [35], active: true });
  const user = await post('/api/UserRegistry', { name: 'bench-user', roleRegistryId: role.id, active: true, password: 'Bench-User-Passw0rd!' });
  return { headers, tenantId: tenant.id, userId: user.id };
}

/** autocannon options for a write whose body differs on every request. */
function write(build, kind) {
  let n = 0;
  const { headers, tenantId, userId } = build.ids;
  const path = kind === 'tenant rename' ? `/api/TenantRegistry/${tenantId}` : `/api/UserRegistry/${userId}`;
  return {
    connections: CONNECTIONS,
    url: `${build.service.url}${path}`,
    requests: [
      {
        method: 'PUT',
        headers,
        setupRequest: (req) => {
          n += 1;
          const body = kind === 'tenant rename' ? { name: `Bench Bank ${build.name} ${n}` } : { email: `bench${n}@example.com` };
          return { ...req, body: JSON.stringify(body) };
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
    for (const kind of ['tenant rename', 'user e-mail']) {
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
    lib.printTable(`Registry writes, ${CONNECTIONS} connections, ${rounds} alternating 4 s rounds (medians)`, rows);
    const ratios = [];
    for (const kind of ['tenant rename', 'user e-mail']) {
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
