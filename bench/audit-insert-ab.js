'use strict';
/**
 * Issue 19: sign-in throughput with the audit log (every UserLogin row enqueued by a trigger, a sealer
 * every second) against the previous build, in one run: each build as its own process on its own
 * database, rounds alternating between them (which goes first alternates too), medians. The
 * previous build is a directory with dist/ and web/ (e.g. `git archive main | tar -x -C /tmp/base`,
 * node_modules linked, `npx tsc -p tsconfig.build.json`).
 *
 * Run: npm run build && node bench/audit-insert-ab.js /path/to/previous/build [rounds]
 */
const { resolve } = require('node:path');
const { Pool } = require('pg');
const lib = require('./lib/service');

const CONNECTIONS = 10;
const SECONDS = 6;
const USERS = 1000;
const PASSWORD = 'Bench-Adm1n-Password';

async function main() {
  const baseline = process.argv[2];
  if (!baseline) throw new Error('usage: node bench/audit-insert-ab.js <previous build> [rounds]');
  const rounds = Number(process.argv[3] ?? 7);
  const argon2 = require('argon2');
  const hash = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
  const builds = [
    { name: 'previous build', root: resolve(baseline), port: 5341 },
    { name: 'with the audit log', root: undefined, port: 5342 },
  ];
  const started = [];
  try {
    for (const build of builds) {
      const db = await lib.createDatabase('tm_bench_audit_ab');
      const service = await lib.startService({ ConnectionString: db.url, SignInThrottle: '0' }, build.port, build.root);
      const pool = new Pool({ connectionString: db.url, max: 2 });
      started.push({ db, service, pool });
      await lib.signInAdministrator(service.url, PASSWORD);
      const tenant = (await pool.query(`INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ('Bench', false, true) RETURNING "Id"`)).rows[0].Id;
      const role = (await pool.query(`INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, 'bench', true) RETURNING "Id"`, [tenant])).rows[0].Id;
      await pool.query(
        `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active", "WirePasswordHash", "CreatedDate", "CreatedUser")
         SELECT $1, 'bench-user-' || g, $2, now(), now() + interval '90 days', true, false, now(), 'bench' FROM generate_series(1, $3) g`,
        [role, hash, USERS],
      );
      let next = 0;
      build.options = {
        connections: CONNECTIONS,
        url: `${service.url}/api/Authentication/ByUserNamePassword`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ userName: `bench-user-${(next++ % USERS) + 1}`, password: PASSWORD }) }) }],
      };
      build.pid = service.pid;
      build.samples = { rps: [], cpu: [], errors: 0 };
    }
    for (const build of builds) await lib.cannon({ ...build.options, duration: 3 });
    const ratios = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? builds : [...builds].reverse();
      const got = new Map();
      for (const build of order) {
        const cpuBefore = lib.processCpuMs(build.pid);
        const result = await lib.cannon({ ...build.options, duration: SECONDS });
        build.samples.rps.push(result.requests.average);
        build.samples.cpu.push(((lib.processCpuMs(build.pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total));
        build.samples.errors += result.non2xx + result.errors;
        got.set(build.name, result.requests.average);
      }
      ratios.push(got.get(builds[1].name) / got.get(builds[0].name));
      console.log(`round ${round + 1}: ${builds.map((b) => `${b.name} ${got.get(b.name).toFixed(1)} req/s`).join(', ')}`);
    }
    lib.printTable(`Password sign-in, ${CONNECTIONS} connections, ${rounds} alternating ${SECONDS} s rounds (medians)`, [
      ...builds.map(({ name, samples }) => ({
        build: name,
        'req/s': lib.median(samples.rps).toFixed(1),
        'service CPU µs/req': Math.round(lib.median(samples.cpu)),
        samples: samples.rps.map((r) => r.toFixed(1)).join(' '),
        'non-2xx/errors': samples.errors,
      })),
      { build: 'with / previous (per-round pairs)', 'req/s': lib.median(ratios).toFixed(2), samples: ratios.map((r) => r.toFixed(2)).join(' ') },
    ]);
  } finally {
    for (const { service, db, pool } of started.reverse()) {
      await pool.end();
      await service.stop();
      await db.drop();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
