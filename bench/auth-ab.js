'use strict';
/**
 * Before/after comparison of the per-request authentication cost (the goal of issues 2 and 13:
 * bearer at least 0.80 of an open route at 50 connections), for two builds in one run: a baseline
 * build (a `dist` folder of an earlier commit, given as the argument) and this checkout's `dist`. Each
 * runs as its own process on its own database. Every round measures, for each build in turn, the open
 * route and then the bearer route back to back, so the ratio of that pair sees the same noise; the
 * table quotes the medians of those per-round ratios, of requests/s, and of service CPU per request.
 *
 * Run: npm run build && node bench/auth-ab.js /path/to/baseline/dist [rounds]
 * A baseline build: git worktree add /tmp/base <commit> && (cd /tmp/base && npm install && npm run build)
 * (its web/assets must sit beside its dist, as in any checkout).
 */
const { join, resolve } = require('node:path');
const lib = require('./lib/service');

const CONNECTIONS = 50;
const SECONDS = 4;

async function main() {
  const baselineDist = process.argv[2];
  if (!baselineDist) throw new Error('usage: node bench/auth-ab.js <baseline dist folder> [rounds]');
  const rounds = Number(process.argv[3] ?? 7);
  const builds = [
    { name: 'before', main: join(resolve(baselineDist), 'main.js'), port: 5321 },
    { name: 'after', main: join(__dirname, '..', 'dist', 'main.js'), port: 5322 },
  ];
  const started = [];
  try {
    for (const build of builds) {
      const db = await lib.createDatabase(`tm_bench_ab_${build.name}`);
      const service = await lib.startService({ ConnectionString: db.url }, build.port, build.main);
      started.push({ db, service });
      const { token } = await lib.signInAdministrator(service.url);
      build.open = { connections: CONNECTIONS, url: `${service.url}/api/Authentication/PasswordPublicKey` };
      build.bearer = { connections: CONNECTIONS, url: `${service.url}/api/Authentication/Session`, headers: { authorization: `Bearer ${token}` } };
      build.pid = service.pid;
      build.samples = { open: [], bearer: [], ratio: [], cpuOpen: [], cpuBearer: [], cpuRatio: [], errors: 0 };
    }
    for (const build of builds) {
      await lib.cannon({ ...build.open, duration: 2 });
      await lib.cannon({ ...build.bearer, duration: 2 });
    }
    for (let round = 0; round < rounds; round++) {
      // Alternate which build goes first, so neither always follows the other.
      for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
        const measure = async (options) => {
          const cpuBefore = lib.processCpuMs(build.pid);
          const result = await lib.cannon({ ...options, duration: SECONDS });
          build.samples.errors += result.non2xx + result.errors;
          return { rps: result.requests.average, cpu: ((lib.processCpuMs(build.pid) - cpuBefore) * 1000) / Math.max(1, result.requests.total) };
        };
        const open = await measure(build.open);
        const bearer = await measure(build.bearer);
        const s = build.samples;
        s.open.push(open.rps);
        s.bearer.push(bearer.rps);
        s.ratio.push(bearer.rps / open.rps);
        s.cpuOpen.push(open.cpu);
        s.cpuBearer.push(bearer.cpu);
        s.cpuRatio.push(open.cpu / bearer.cpu);
      }
    }
    lib.printTable(
      `Bearer JWT vs open route at ${CONNECTIONS} connections, ${rounds} alternating rounds of ${SECONDS} s pairs (medians)`,
      builds.map(({ name, samples: s }) => ({
        build: name,
        'open req/s': Math.round(lib.median(s.open)),
        'bearer req/s': Math.round(lib.median(s.bearer)),
        'bearer/open (per-round pairs)': lib.median(s.ratio).toFixed(2),
        'per-round ratios': s.ratio.map((r) => r.toFixed(2)).join(' '),
        'CPU µs/req open': Math.round(lib.median(s.cpuOpen)),
        'CPU µs/req bearer': Math.round(lib.median(s.cpuBearer)),
        'CPU ratio (open / bearer)': lib.median(s.cpuRatio).toFixed(2),
        'non-2xx/errors': s.errors,
      })),
    );
  } finally {
    for (const { service, db } of started.reverse()) {
      await service.stop();
      await db.drop();
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
