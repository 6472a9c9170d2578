'use strict';
/**
 * Issue 19: the cost of sealing the audit log (contract 15) to sign-in, and how fast rows are sealed.
 *
 * 1. Sign-in throughput (POST /api/Authentication/ByUserNamePassword, 10 connections) in alternating
 *    rounds: "idle" (nothing waits to be sealed) and "backlog" (100,000 UserLogin rows inserted in one
 *    statement just before the round, sealed while the round runs). Medians, and the ratio per pair.
 * 2. For each backlog: the time from the bulk INSERT's commit until its last row is a leaf (a leaf is
 *    written in the same transaction as its signed checkpoint), and the rows sealed per second.
 * 3. Insert-to-checkpoint latency at the 200-client sign-in load: a row inserted every 100 ms while
 *    200 connections sign in, the time until it is a leaf; median, p99, max.
 * 4. Proof and leaf reads on a large log (BENCH_AUDIT_LEAVES leaves, default 1,000,000, written
 *    directly: leaves with random hashes and the kept tree levels, then one checkpoint of that size;
 *    the timing of O(log n) reads does not depend on the hashes being true).
 *
 * Run: npm run build && node bench/audit-seal.js [rounds] [parts: seal,latency,reads (default all)]
 */
const { randomBytes } = require('node:crypto');
const { Pool } = require('pg');
const lib = require('./lib/service');

const BACKLOG = 100_000;
const SECONDS = 6;
const PASSWORD = 'Bench-Adm1n-Password';
/** Users signing in, in turn (each at most once per ~USERS requests). */
const USERS = 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

async function waitSealed(pool, id, timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [id]);
    if (rows.length > 0) return;
    if (Date.now() > end) throw new Error(`row ${id} not sealed within ${timeoutMs} ms`);
    await sleep(5);
  }
}

async function pendingRows(pool) {
  return Number((await pool.query(`SELECT count(*) AS n FROM "AuditPending"`)).rows[0].n);
}

/** 100,000 rows in one statement; resolves with the commit time and the last row's Id. */
async function bulkInsert(pool) {
  const { rows } = await pool.query(
    `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "UserAgent")
     SELECT 'bulk-' || g, 1, false, '198.51.100.' || (g % 250), 'bench/audit-seal' FROM generate_series(1, $1) g
     RETURNING "Id"`,
    [BACKLOG],
  );
  return { committedAt: Date.now(), lastId: rows.reduce((max, r) => (BigInt(r.Id) > max ? BigInt(r.Id) : max), 0n).toString() };
}

async function main() {
  const rounds = Number(process.argv[2] ?? 5);
  const parts = new Set((process.argv[3] ?? 'seal,latency,reads').split(','));
  const db = await lib.createDatabase('tm_bench_audit');
  // The throttle of failed sign-ins per address (all of this comes from 127.0.0.1) is not measured here.
  const service = await lib.startService({ ConnectionString: db.url, SignInThrottle: '0' }, 5331);
  const pool = new Pool({ connectionString: db.url, max: 4 });
  try {
    await lib.signInAdministrator(service.url, PASSWORD);
    // Sign-ins spread over many users: concurrent attempts on one user count against its lockout
    // (docs/decisions/0012) and would be refused, not measured. One Argon2id hash serves them all.
    const argon2 = require('argon2');
    const hash = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    const tenant = (await pool.query(`INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ('Bench', false, true) RETURNING "Id"`)).rows[0].Id;
    const role = (await pool.query(`INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, 'bench', true) RETURNING "Id"`, [tenant])).rows[0].Id;
    await pool.query(
      `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active", "WirePasswordHash", "CreatedDate", "CreatedUser")
       SELECT $1, 'bench-user-' || g, $2, now(), now() + interval '90 days', true, false, now(), 'bench' FROM generate_series(1, $3) g`,
      [role, hash, USERS],
    );
    let next = 0;
    const signIn = (connections) => ({
      connections,
      url: `${service.url}/api/Authentication/ByUserNamePassword`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ userName: `bench-user-${(next++ % USERS) + 1}`, password: PASSWORD }) }) }],
    });

    // 1 and 2: alternating idle and backlog rounds.
    if (parts.has('seal')) {
      await lib.cannon({ ...signIn(10), duration: 3 });
      const samples = { idle: [], backlog: [], ratio: [], sealMs: [], errors: 0 };
      for (let round = 0; round < rounds; round++) {
        while ((await pendingRows(pool)) > 0) await sleep(50);
        const idle = await lib.cannon({ ...signIn(10), duration: SECONDS });
        const bulk = await bulkInsert(pool);
        const sealed = waitSealed(pool, bulk.lastId).then(() => Date.now() - bulk.committedAt);
        const backlog = await lib.cannon({ ...signIn(10), duration: SECONDS });
        samples.sealMs.push(await sealed);
        samples.idle.push(idle.requests.average);
        samples.backlog.push(backlog.requests.average);
        samples.ratio.push(backlog.requests.average / idle.requests.average);
        samples.errors += idle.non2xx + idle.errors + backlog.non2xx + backlog.errors;
        console.log(
          `round ${round + 1}: idle ${idle.requests.average.toFixed(1)} req/s (${idle.non2xx} non-2xx), backlog ${backlog.requests.average.toFixed(1)} req/s (${backlog.non2xx} non-2xx), 100,000 rows sealed in ${samples.sealMs.at(-1)} ms`,
        );
    }
    lib.printTable(`Sign-in (10 connections) while ${BACKLOG.toLocaleString('en')} rows are sealed vs while nothing waits, ${rounds} alternating ${SECONDS} s rounds (medians)`, [
      {
        'idle req/s': lib.median(samples.idle).toFixed(1),
        'backlog req/s': lib.median(samples.backlog).toFixed(1),
        'backlog/idle (per-round pairs)': lib.median(samples.ratio).toFixed(2),
        'per-round ratios': samples.ratio.map((r) => r.toFixed(2)).join(' '),
        'non-2xx/errors': samples.errors,
      },
    ]);
    lib.printTable('Bulk insert of 100,000 rows to its last row sealed in a signed checkpoint (while 10 connections sign in)', [
      {
        'median ms': lib.median(samples.sealMs),
        'max ms': Math.max(...samples.sealMs),
        'rows/s (median)': Math.round(BACKLOG / (lib.median(samples.sealMs) / 1000)),
        samples: samples.sealMs.join(' '),
      },
    ]);

    // The same without sign-in load.
    const quiet = [];
    for (let i = 0; i < 3; i++) {
      while ((await pendingRows(pool)) > 0) await sleep(50);
      const bulk = await bulkInsert(pool);
      await waitSealed(pool, bulk.lastId);
      quiet.push(Date.now() - bulk.committedAt);
    }
    lib.printTable('Bulk insert of 100,000 rows to sealed, no other load', [
      { 'median ms': lib.median(quiet), 'rows/s (median)': Math.round(BACKLOG / (lib.median(quiet) / 1000)), samples: quiet.join(' ') },
    ]);

    }

    // 3: insert-to-checkpoint latency at 200 sign-in connections.
    if (parts.has('latency')) {
      while ((await pendingRows(pool)) > 0) await sleep(50);
      const latencies = [];
      let loading = true;
      const sampler = (async () => {
        while (loading) {
          const started = Date.now();
          const { rows } = await pool.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId") VALUES ('probe', 1) RETURNING "Id"`);
          const committed = Date.now();
          void waitSealed(pool, rows[0].Id).then(() => latencies.push(Date.now() - committed));
          await sleep(Math.max(0, 100 - (Date.now() - started)));
        }
      })();
      const load = await lib.cannon({ ...signIn(200), duration: 20 });
      loading = false;
      await sampler;
      while ((await pendingRows(pool)) > 0) await sleep(50);
      await sleep(200);
      lib.printTable('A row inserted every 100 ms while 200 connections sign in: insert to signed checkpoint', [
        {
          'sign-in req/s': load.requests.average.toFixed(1),
          'sign-in statuses': Object.entries(load.statusCodeStats ?? {}).map(([code, { count }]) => `${code}:${count}`).join(' '),
          'sign-in p99 ms': load.latency.p99,
          probes: latencies.length,
          'median ms': lib.median(latencies),
          'p99 ms': percentile(latencies, 99),
          'max ms': Math.max(...latencies),
        },
      ]);

    }

    // 4: proof and leaf reads on a large log.
    if (!parts.has('reads')) return;
    // Nothing may be sealed while the leaves are written behind the sealer's back.
    while ((await pendingRows(pool)) > 0) await sleep(50);
    await sleep(2000);
    const n = Number(process.env.BENCH_AUDIT_LEAVES ?? 1_000_000);
    const [{ size }] = (await pool.query(`SELECT COALESCE(max("LeafIndex") + 1, 0)::bigint AS size FROM "AuditLeaf"`)).rows;
    const base = Number(size);
    console.log(`writing ${n.toLocaleString('en')} more leaves directly (random hashes) …`);
    const fillStart = Date.now();
    const CHUNK = 1_000_000;
    for (let from = base; from < base + n; from += CHUNK) {
      const to = Math.min(base + n, from + CHUNK);
      await pool.query(
        `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate")
         SELECT g, 'UserLogout', 1000000000000 + g, now(), sha256(int8send(g)), sha256(int8send(-g)), now() FROM generate_series($1::bigint, $2::bigint - 1) g`,
        [from, to],
      );
    }
    // The kept levels over the whole log (4, 8, 12, …): random hashes, one per complete subtree.
    const total = base + n;
    for (let level = 4; 2 ** level <= total; level += 4) {
      await pool.query(
        `INSERT INTO "AuditTreeNode" ("Level", "Index", "Hash") SELECT $1::smallint, g, sha256(int8send(g * 64 + $1::int)) FROM generate_series(0, $2::bigint - 1) g
         ON CONFLICT DO NOTHING`,
        [level, Math.floor(total / 2 ** level)],
      );
    }
    await pool.query(`INSERT INTO "AuditCheckpoint" ("TreeSize", "RootHash", "CreatedDate", "Note") VALUES ($1, $2, now(), 'bench: not a signed note')`, [total, randomBytes(32)]);
    await pool.query('ANALYZE "AuditLeaf"; ANALYZE "AuditTreeNode"');
    console.log(`written in ${Math.round((Date.now() - fillStart) / 1000)} s`);
    const { token } = await lib.signInAdministrator(service.url, PASSWORD);
    const auth = { authorization: `Bearer ${token}` };
    const timed = async (path) => {
      const times = [];
      for (let i = 0; i < 30; i++) {
        const started = process.hrtime.bigint();
        const res = await fetch(`${service.url}${path(i)}`, { headers: auth });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${path(i)}: ${res.status}`);
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      return { median: lib.median(times).toFixed(1), p99: percentile(times, 99).toFixed(1) };
    };
    const pick = (i) => base + Math.floor(((i * 7919) % 1000) * (n / 1000));
    const proof = await timed((i) => `/api/Audit/Proof?table=UserLogout&id=${1000000000000 + pick(i)}`);
    const consistency = await timed((i) => `/api/Audit/Consistency?first=${base}&second=${total}`);
    const leaves = await timed((i) => `/api/Audit/Leaves?start=${pick(i)}&end=${pick(i) + 1000}`);
    lib.printTable(`Reads on a log of ${total.toLocaleString('en')} leaves (30 sequential requests each, ms)`, [
      { read: 'Proof (inclusion, one leaf)', ...proof },
      { read: `Consistency ${base} → ${total}`, ...consistency },
      { read: 'Leaves, 1000 at a time', ...leaves },
    ]);
  } finally {
    await pool.end();
    await service.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
