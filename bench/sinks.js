'use strict';
/**
 * Issue 30, contract 19: how fast one sink delivers, and what delivery costs sign-in.
 *
 * 1. Backlog: with the sink paused, 100,000 UserLogin rows are inserted and sealed; the sink is then
 *    resumed and the receiver (an HTTP server in a child process of this script, answering 200 at once) records when
 *    each batch arrived. Reported: the time from the first acknowledged batch to the last leaf, and
 *    the events per second over it. Goal: within 10 s, at least 20,000 events/s.
 * 2. Sign-in throughput (10 connections, alternating 6 s rounds): "idle" (the sink paused with its
 *    backlog waiting, or up to date) and "catching up" (a sealed 100,000-leaf backlog is delivered
 *    during the round), in alternating order. Goal: ≥ 0.9.
 *
 * Service CPU (user + system from /proc) is measured from the resume to the last acknowledgement and
 * reported per event: on shared cores the wall-clock rate says more about the machine than the sink.
 *
 * Run: npm run build && node bench/sinks.js [rounds] [backlog,signin]
 * (BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p" profiles the service; BENCH_ROOT=<another
 * checkout, built> measures that build instead, for an A/B of two builds in alternating runs.)
 */
const { spawn } = require('node:child_process');
const { Pool } = require('pg');
const lib = require('./lib/service');

const BACKLOG = 100_000;
const SECONDS = 6;
const PASSWORD = 'Bench-Adm1n-Password';
const USERS = 1000;
/** The webhook receiver (a child process): answers 200 at once, reports each batch's arrival over IPC. */
const RECEIVER = `
  const server = require('node:http').createServer((req, res) => {
    let bytes = 0;
    req.on('data', (c) => (bytes += c.length));
    req.on('end', () => {
      process.send({ batch: { at: Date.now(), first: Number(req.headers['x-leaf-first']), last: Number(req.headers['x-leaf-last']), bytes } });
      res.writeHead(200).end('ok');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('disconnect', () => process.exit(0));
`;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  const rounds = Number(process.argv[2] ?? 3);
  const parts = new Set((process.argv[3] ?? 'backlog,signin').split(','));
  const db = await lib.createDatabase('tm_bench_sinks');
  // A port of its own: other benchmarks (audit-seal-cpu, audit-insert-ab) take 5341-5342, and a run beside one of them would talk to it.
  const service = await lib.startService({ ConnectionString: db.url, SignInThrottle: '0' }, Number(process.env.BENCH_PORT ?? 5361), process.env.BENCH_ROOT || undefined);
  const pool = new Pool({ connectionString: db.url, max: 4, application_name: 'bench-sinks' });
  /** CPU (ms) of the service's PostgreSQL backends (not this script's), by pid: PostgreSQL runs on this machine. */
  const databaseCpu = async () => {
    const { rows } = await pool.query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> 'bench-sinks'`);
    const cpu = new Map();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, lib.processCpuMs(pid));
      } catch {
        /* gone meanwhile */
      }
    }
    return cpu;
  };
  const databaseCpuSince = (before, after) => [...after].reduce((sum, [pid, ms]) => sum + ms - (before.get(pid) ?? 0), 0);
  const batches = [];
  // The receiver runs in a process of its own: in this one it would share the event loop of the load
  // generator (autocannon), and the sign-in rounds would measure the receiver's work as the service's.
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const port = await new Promise((resolve, reject) => {
    receiver.once('message', (m) => resolve(m.port));
    receiver.once('exit', () => reject(new Error('the receiver stopped')));
  });
  receiver.on('message', (m) => m.batch && batches.push(m.batch));
  const hook = `http://127.0.0.1:${port}/hook`;
  try {
    const { token } = await lib.signInAdministrator(service.url, PASSWORD);
    const call = async (method, path, body) => {
      const res = await fetch(`${service.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const sink = await call('POST', '/api/SecuritySink', { name: 'bench', type: 'webhook', url: hook, format: 'ocsf', secret: 'bench-signing-key-0123456789', active: true, startLeafIndex: 0 });
    const setActive = (active) => call('PUT', `/api/SecuritySink/${sink.id}`, { name: 'bench', type: 'webhook', url: hook, format: 'ocsf', active });
    const treeSize = async () => Number((await pool.query(`SELECT max("TreeSize") AS n FROM "AuditCheckpoint"`)).rows[0].n);
    const cursor = async () => Number((await pool.query(`SELECT "NextLeafIndex" AS n FROM "SecuritySink" WHERE "Id" = $1`, [sink.id])).rows[0].n);
    /** Pauses the sink, inserts and seals a backlog; answers its end. */
    const backlog = async () => {
      await setActive(false);
      await pool.query(
        `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "UserAgent")
         SELECT 'bulk-' || g, 1, g % 10 = 0, '198.51.100.' || (g % 250), 'bench/sinks' FROM generate_series(1, $1) g`,
        [BACKLOG],
      );
      while (Number((await pool.query(`SELECT count(*) AS n FROM "AuditPending"`)).rows[0].n) > 0) await sleep(50);
      return treeSize();
    };
    const caughtUp = async (end) => {
      while ((await cursor()) < end) await sleep(20);
    };

    // 1: backlog delivery.
    const deliveries = [];
    for (let i = 0; i < (parts.has('backlog') ? rounds : 0); i++) {
      const end = await backlog();
      const start = await cursor();
      batches.length = 0;
      const cpuBefore = lib.processCpuMs(service.pid);
      const dbBefore = await databaseCpu();
      await setActive(true);
      await caughtUp(end);
      const cpuMs = lib.processCpuMs(service.pid) - cpuBefore;
      const dbMs = databaseCpuSince(dbBefore, await databaseCpu());
      const firstAck = batches.find((b) => b.first >= start);
      const lastAt = batches.find((b) => b.last >= end - 1).at;
      const seconds = (lastAt - firstAck.at) / 1000;
      deliveries.push({ leaves: end - start, seconds, perSecond: (end - start) / seconds, cpuMs, dbMs });
      console.log(
        `backlog ${i + 1}: ${end - start} leaves delivered ${seconds.toFixed(2)} s after the first acknowledged batch (${Math.round((end - start) / seconds)} events/s); service CPU ${(cpuMs / 1000).toFixed(2)} s, ${((cpuMs * 1000) / (end - start)).toFixed(1)} µs/event (${Math.round((end - start) / (cpuMs / 1000))} events per CPU-second); PostgreSQL CPU ${((dbMs * 1000) / (end - start)).toFixed(1)} µs/event; load average ${require('node:os').loadavg()[0].toFixed(1)}`,
      );
    }
    if (deliveries.length > 0) lib.printTable(`One webhook sink, ${BACKLOG.toLocaleString('en')}-leaf backlog, receiver on this machine (medians of ${rounds})`, [
      {
        'seconds from first ack to last leaf': lib.median(deliveries.map((d) => d.seconds)).toFixed(2),
        'events/s': Math.round(lib.median(deliveries.map((d) => d.perSecond))),
        'service CPU s per backlog': lib.median(deliveries.map((d) => d.cpuMs / 1000)).toFixed(2),
        'service CPU µs/event': lib.median(deliveries.map((d) => (d.cpuMs * 1000) / d.leaves)).toFixed(1),
        'events per service CPU-second': Math.round(lib.median(deliveries.map((d) => d.leaves / (d.cpuMs / 1000)))),
        'PostgreSQL CPU µs/event': lib.median(deliveries.map((d) => (d.dbMs * 1000) / d.leaves)).toFixed(1),
        samples: deliveries.map((d) => d.seconds.toFixed(2)).join(' '),
      },
    ]);

    // 2: sign-in while catching up.
    if (!parts.has('signin')) return;
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
    const signIn = {
      connections: 10,
      url: `${service.url}/api/Authentication/ByUserNamePassword`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ userName: `bench-user-${(next++ % USERS) + 1}`, password: PASSWORD }) }) }],
    };
    await lib.cannon({ ...signIn, duration: 3 });
    const samples = { idle: [], busy: [], ratio: [], errors: 0 };
    for (let i = 0; i < rounds; i++) {
      // The backlog is written and sealed (sink paused) before both rounds, and the order alternates, so
      // neither round alone follows the bulk insert (autovacuum, checkpoints) nor always runs first.
      await caughtUp(await treeSize());
      await backlog();
      let idle;
      let busy;
      if (i % 2 === 0) {
        idle = await lib.cannon({ ...signIn, duration: SECONDS });
        await setActive(true);
        busy = await lib.cannon({ ...signIn, duration: SECONDS });
      } else {
        await setActive(true);
        busy = await lib.cannon({ ...signIn, duration: SECONDS });
        await caughtUp(await treeSize());
        idle = await lib.cannon({ ...signIn, duration: SECONDS });
      }
      samples.idle.push(idle.requests.average);
      samples.busy.push(busy.requests.average);
      samples.ratio.push(busy.requests.average / idle.requests.average);
      samples.errors += idle.non2xx + idle.errors + busy.non2xx + busy.errors;
      console.log(`round ${i + 1}: idle ${idle.requests.average.toFixed(1)} req/s, catching up ${busy.requests.average.toFixed(1)} req/s (ratio ${(busy.requests.average / idle.requests.average).toFixed(2)}); load average ${require('node:os').loadavg()[0].toFixed(1)}`);
    }
    lib.printTable(`Sign-in (10 connections) while one sink catches up on ${BACKLOG.toLocaleString('en')} leaves vs up to date, ${rounds} alternating ${SECONDS} s rounds (medians)`, [
      {
        'idle req/s': lib.median(samples.idle).toFixed(1),
        'catching up req/s': lib.median(samples.busy).toFixed(1),
        'ratio (per-round pairs)': lib.median(samples.ratio).toFixed(2),
        'per-round ratios': samples.ratio.map((r) => r.toFixed(2)).join(' '),
        'non-2xx/errors': samples.errors,
      },
    ]);
  } finally {
    receiver.kill();
    await pool.end();
    await service.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
