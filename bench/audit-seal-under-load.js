'use strict';
/**
 * Issue 29: what sealing a 100,000-row backlog costs sign-in when sign-in saturates the cores, and how
 * soon the backlog still reaches a checkpoint. Goals: sign-in while sealing >= 0.9 of sign-in with no
 * backlog; the checkpoint covering the backlog within 20 s of its commit.
 *
 * One service, one database. Password sign-ins (autocannon, BENCH_CONNECTIONS connections, default 10,
 * over 1,000 accounts, SignInThrottle off) keep the Argon2 gate busy. Rounds alternate their order:
 * - "idle": sign-ins for SECONDS; the rate over the window after a warm-up second.
 * - "sealing": sign-ins start, then one INSERT … SELECT generate_series of 100,000 UserLogin rows (the
 *   bench's own connection); from its commit to the moment the last row is a leaf (the leaf and the
 *   checkpoint that covers it commit in one transaction) the rate of 2xx sign-ins is counted.
 * Reported: both rates, their ratio per round (median), and the time to the checkpoint.
 *
 * Run: npm run build && node bench/audit-seal-under-load.js [rounds]
 * (BENCH_ROOT=<another checkout, built> measures that build instead.)
 */
const autocannon = require('autocannon');
const { Pool } = require('pg');
const lib = require('./lib/service');

const BACKLOG = 100_000;
const SECONDS = 10;
const PASSWORD = 'Bench-Adm1n-Password';
const USERS = 1000;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts sign-ins; `stop()` ends them and answers the times (ms) of every 2xx answer. */
function signIns(url) {
  let next = 0;
  const times = [];
  let errors = 0;
  const instance = autocannon({
    url: `${url}/api/Authentication/ByUserNamePassword`,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: 120,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ userName: `bench-user-${(next++ % USERS) + 1}`, password: PASSWORD }) }) }],
  });
  instance.on('response', (_client, status) => (status >= 200 && status < 300 ? times.push(Date.now()) : errors++));
  const done = new Promise((resolve) => instance.on('done', resolve));
  return {
    rate: (from, to) => times.filter((t) => t >= from && t < to).length / ((to - from) / 1000),
    errors: () => errors,
    stop: async () => {
      instance.stop();
      await done;
    },
  };
}

async function main() {
  const rounds = Number(process.argv[2] ?? 3);
  const db = await lib.createDatabase('tm_bench_sealload');
  const service = await lib.startService({ ConnectionString: db.url, SignInThrottle: '0' }, Number(process.env.BENCH_PORT ?? 5371), process.env.BENCH_ROOT || undefined);
  const pool = new Pool({ connectionString: db.url, max: 2 });
  try {
    await lib.signInAdministrator(service.url, PASSWORD);
    const argon2 = require('argon2');
    const hash = await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    const tenant = (await pool.query(`INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ('Bench', false, true) RETURNING "Id"`)).rows[0].Id;
    const role = (await pool.query(`INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, 'bench', true) RETURNING "Id"`, [tenant])).rows[0].Id;
    await pool.query(
      `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active", "WirePasswordHash", "CreatedDate", "CreatedUser")
       SELECT $1, 'bench-user-' || g, $2, now(), now() + interval '90 days', true, false, now(), 'bench' FROM generate_series(1, $3) g`,
      [role, hash, USERS],
    );
    const warm = signIns(service.url);
    await sleep(3000);
    await warm.stop();

    const idleRound = async () => {
      const load = signIns(service.url);
      const start = Date.now();
      await sleep(SECONDS * 1000);
      const rate = load.rate(start + 1000, Date.now());
      await load.stop();
      return { rate, errors: load.errors() };
    };
    const sealingRound = async () => {
      const load = signIns(service.url);
      await sleep(1000);
      const { rows } = await pool.query(
        `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "UserAgent")
         SELECT 'bulk-' || g, 1, false, '198.51.100.' || (g % 250), 'bench/audit-seal-under-load' FROM generate_series(1, $1) g
         RETURNING "Id"`,
        [BACKLOG],
      );
      const committed = Date.now();
      const last = rows.reduce((max, r) => (BigInt(r.Id) > max ? BigInt(r.Id) : max), 0n).toString();
      for (;;) {
        if ((await pool.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [last])).rows.length > 0) break;
        if (Date.now() - committed > 120_000) throw new Error('backlog not sealed within 120 s');
        await sleep(20);
      }
      const sealed = Date.now();
      const rate = load.rate(committed, sealed);
      await load.stop();
      return { rate, seconds: (sealed - committed) / 1000, errors: load.errors() };
    };
    const samples = { idle: [], busy: [], ratio: [], seconds: [], errors: 0 };
    for (let i = 0; i < rounds; i++) {
      // Both rounds start with nothing pending.
      while (Number((await pool.query(`SELECT count(*) AS n FROM "AuditPending"`)).rows[0].n) > 0) await sleep(100);
      let idle;
      let busy;
      if (i % 2 === 0) {
        idle = await idleRound();
        busy = await sealingRound();
      } else {
        busy = await sealingRound();
        while (Number((await pool.query(`SELECT count(*) AS n FROM "AuditPending"`)).rows[0].n) > 0) await sleep(100);
        idle = await idleRound();
      }
      samples.idle.push(idle.rate);
      samples.busy.push(busy.rate);
      samples.ratio.push(busy.rate / idle.rate);
      samples.seconds.push(busy.seconds);
      samples.errors += idle.errors + busy.errors;
      console.log(
        `round ${i + 1}: idle ${idle.rate.toFixed(1)} sign-ins/s, sealing ${busy.rate.toFixed(1)} (ratio ${(busy.rate / idle.rate).toFixed(2)}); backlog sealed ${busy.seconds.toFixed(1)} s after its commit; load average ${require('node:os').loadavg()[0].toFixed(1)}`,
      );
    }
    lib.printTable(`Sign-in (${CONNECTIONS} connections) while a ${BACKLOG.toLocaleString('en')}-row backlog is sealed vs nothing pending, ${rounds} alternating rounds (medians)`, [
      {
        'idle sign-ins/s': lib.median(samples.idle).toFixed(1),
        'sealing sign-ins/s': lib.median(samples.busy).toFixed(1),
        'ratio (per-round pairs)': lib.median(samples.ratio).toFixed(2),
        'per-round ratios': samples.ratio.map((r) => r.toFixed(2)).join(' '),
        's to the checkpoint': lib.median(samples.seconds).toFixed(1),
        'per-round s': samples.seconds.map((s) => s.toFixed(1)).join(' '),
        'non-2xx/errors': samples.errors,
      },
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
