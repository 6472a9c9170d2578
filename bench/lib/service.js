'use strict';
/**
 * Shared helpers for the benchmarks: a fresh PostgreSQL database, the compiled service started as a
 * child process (exactly what `npm start` runs), autocannon rounds, medians and table printing.
 */
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { mkdtempSync, readFileSync } = require('node:fs');
const { execSync } = require('node:child_process');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Pool } = require('pg');
const autocannon = require('autocannon');

const CLOCK_TICKS = Number(execSync('getconf CLK_TCK').toString().trim()) || 100;

const SERVER_URL = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
const JWT_KEY = 'bench-jwt-key-0123456789abcdef0123456789abcdef';
const API_HMAC_KEY = 'bench-api-hmac-key-0123456789abcdef';

async function createDatabase(prefix = 'tm_bench') {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const dropper = new Pool({ connectionString: SERVER_URL, max: 1 });
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await dropper.end();
    },
  };
}

/**
 * A database under a fixed name, dropped if it exists and created empty: for the benchmarks that keep
 * their rows under a known name for a later run (BENCH_KEEP, BENCH_DB), unlike createDatabase. Returns its URL.
 */
async function recreateNamedDatabase(name) {
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the database `name` (of recreateNamedDatabase), forcing its connections closed. */
async function dropNamedDatabase(name) {
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

/** Starts dist/main.js (of this checkout, or of the checkout at `root`) on a free port; resolves once it answers. */
async function startService(env, port, root = join(__dirname, '..', '..')) {
  // BENCH_SERVICE_NODE_ARGS: extra node flags for the service (e.g. `--cpu-prof --cpu-prof-dir=/tmp/x`).
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'dist', 'main.js')], {
    env: {
      ...process.env,
      JwtKey: JWT_KEY,
      ApiHmacKey: API_HMAC_KEY,
      DataDirectory: mkdtempSync(join(tmpdir(), 'tm-bench-')),
      LogLevel: 'error',
      BindAddress: '127.0.0.1',
      Port: String(port),
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  // Up to two minutes: on the shared machine a start under load has taken longer than 20 s.
  for (let i = 0; i < 1200; i++) {
    try {
      const res = await fetch(`${url}/api/Authentication/PasswordPublicKey`);
      if (res.ok) return { url, child, pid: child.pid, stop: () => new Promise((r) => { child.once('exit', r); child.kill('SIGTERM'); }) };
    } catch {
      /* not yet listening */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('service did not start');
}

/** Signs the seeded Administrator in (setting a password on first use); returns token and cookie. */
async function signInAdministrator(url, password = 'Bench-Adm1n-Password') {
  let res = await fetch(`${url}/api/Authentication/ByUserNamePassword`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userName: 'Administrator', password }),
  });
  if (res.status !== 200) {
    res = await fetch(`${url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'Administrator', password: 'Administrator', newPassword: password, repeatNewPassword: password }),
    });
  }
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status}`);
  const body = await res.json();
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  return { token: body.token, cookie };
}

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: 10, pipelining: 1, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux). */
function processCpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  return (ticks * 1000) / CLOCK_TICKS;
}

/**
 * Alternates the targets over `rounds` rounds after one warm-up round each, so noise on the shared
 * cores hits every target alike; returns the median requests/s and non-2xx count per target. With
 * `pid` (the service's process), also the median service CPU time per request: on two shared cores the
 * load generator's own CPU caps requests/s, so CPU per request shows the service's cost more directly.
 * `pidOf(target)` names the process per target instead (two services compared side by side).
 */
async function alternate(targets, { rounds = 5, seconds = 4, warmup = 2, pid, pidOf } = {}) {
  for (const t of targets) await cannon({ ...t.options, duration: warmup });
  const samples = new Map(targets.map((t) => [t.name, []]));
  const cpu = new Map(targets.map((t) => [t.name, []]));
  const errors = new Map(targets.map((t) => [t.name, 0]));
  const measured = pid !== undefined || pidOf !== undefined;
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const target = pidOf ? pidOf(t) : pid;
      const before = measured ? processCpuMs(target) : 0;
      const result = await cannon({ ...t.options, duration: seconds });
      if (measured) cpu.get(t.name).push(((processCpuMs(target) - before) * 1000) / Math.max(1, result.requests.total));
      samples.get(t.name).push(result.requests.average);
      errors.set(t.name, errors.get(t.name) + result.non2xx + result.errors);
    }
  }
  return targets.map((t) => ({
    name: t.name,
    rps: median(samples.get(t.name)),
    samples: samples.get(t.name),
    cpuMicrosPerRequest: measured ? median(cpu.get(t.name)) : null,
    errors: errors.get(t.name),
  }));
}

/**
 * Table rows for one alternate() run whose first target is the open route: requests/s and service CPU
 * per request, each also as a ratio to that open route.
 */
function comparisonRows(results, connections) {
  const [base] = results;
  return results.map((r) => ({
    connections,
    target: r.name,
    'req/s': Math.round(r.rps),
    'ratio to open': (r.rps / base.rps).toFixed(2),
    'service CPU µs/req': Math.round(r.cpuMicrosPerRequest),
    'CPU ratio (open / this)': (base.cpuMicrosPerRequest / r.cpuMicrosPerRequest).toFixed(2),
    samples: r.samples.map(Math.round).join(' '),
    'non-2xx/errors': r.errors,
  }));
}

function printTable(title, rows) {
  console.log(`\n${title}`);
  console.table(rows);
}

module.exports = { createDatabase, recreateNamedDatabase, dropNamedDatabase, startService, signInAdministrator, cannon, alternate, median, comparisonRows, printTable, processCpuMs, JWT_KEY, API_HMAC_KEY };
