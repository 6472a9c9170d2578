'use strict';
/**
 * Issue 29: what sealing a 100,000-row backlog costs sign-in when sign-in saturates the cores, and how
 * soon the backlog still reaches a checkpoint. Goals: sign-in while sealing >= 0.9 of sign-in with no
 * backlog; the checkpoint covering the backlog within 20 s of its commit.
 *
 * One service, one database. Password sign-ins (autocannon, BENCH_CONNECTIONS connections, default 10,
 * over 1,000 accounts, SignInThrottle off) keep the Argon2 gate busy throughout a round:
 * - "idle" before: IDLE_SECONDS with nothing pending (after a warm-up second);
 * - "sealing": one INSERT … SELECT generate_series of 100,000 UserLogin rows (the bench's own
 *   connection); from its commit to the moment the last row is a leaf (the leaf and the checkpoint
 *   that covers it commit in one transaction) the rate of 2xx sign-ins is counted;
 * - "idle" after: IDLE_SECONDS once it is sealed (after half a second).
 * Reported: the rates, the ratio of sealing to the mean of the two idle windows beside it (median of
 * the rounds), and the time to the checkpoint.
 *
 * Run: npm run build && node bench/audit-seal-under-load.js [rounds]
 * (BENCH_ROOT=<another checkout, built> measures that build instead.)
 */
const autocannon = require('autocannon');
const { Pool } = require('pg');
const lib = require('./lib/service');

const BACKLOG = 100_000;
const IDLE_SECONDS = 8;
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

    // One round: sign-ins throughout; the rate with nothing pending just before the backlog and just
    // after it is sealed (IDLE_SECONDS each), and while it is sealed. The ratio is taken against the
    // mean of the two idle windows beside it, so a drift of the shared machine's other load between
    // rounds cancels out.
    const round = async () => {
      const load = signIns(service.url);
      const startedAt = Date.now();
      await sleep((1 + IDLE_SECONDS) * 1000);
      const before = load.rate(startedAt + 1000, Date.now());
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
      await sleep((0.5 + IDLE_SECONDS) * 1000);
      const after = load.rate(sealed + 500, Date.now());
      const busy = load.rate(committed, sealed);
      await load.stop();
      return { idle: (before + after) / 2, before, after, busy, seconds: (sealed - committed) / 1000, errors: load.errors() };
    };
    const samples = { idle: [], busy: [], ratio: [], seconds: [], errors: 0 };
    for (let i = 0; i < rounds; i++) {
      while (Number((await pool.query(`SELECT count(*) AS n FROM "AuditPending"`)).rows[0].n) > 0) await sleep(100);
      const r = await round();
      samples.idle.push(r.idle);
      samples.busy.push(r.busy);
      samples.ratio.push(r.busy / r.idle);
      samples.seconds.push(r.seconds);
      samples.errors += r.errors;
      console.log(
        `round ${i + 1}: idle ${r.before.toFixed(1)} before / ${r.after.toFixed(1)} after sign-ins/s, sealing ${r.busy.toFixed(1)} (ratio ${(r.busy / r.idle).toFixed(2)}); backlog sealed ${r.seconds.toFixed(1)} s after its commit; load average ${require('node:os').loadavg()[0].toFixed(1)}`,
      );
    }
    lib.printTable(`Sign-in (${CONNECTIONS} connections) while a ${BACKLOG.toLocaleString('en')}-row backlog is sealed vs nothing pending just before and after, ${rounds} rounds (medians)`, [
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
