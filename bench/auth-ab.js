'use strict';
/**
 * The goal of issues 2 and 13 (bearer at least 0.80 of an open route at 50 connections) for two
 * builds in one run, on a busy machine: a baseline checkout (the argument: a directory with dist/ and
 * web/, e.g. a `git worktree` of the earlier commit after `npm run build`) and this checkout. Each runs
 * as its own process on its own database. Unlike bench/compare-auth.js, which alternates whole targets,
 * every round here measures, for each build in turn, the open route and then the bearer route back to
 * back, and takes the ratio of that pair: when other work on the shared cores comes and goes within
 * seconds, a pair sees the same noise where medians of separate targets do not. The table quotes the
 * medians of those per-round ratios, of requests/s and of service CPU per request.
 *
 * Run: npm run build && node bench/auth-ab.js /path/to/baseline/checkout [rounds]
 */
const { resolve } = require('node:path');
const lib = require('./lib/service');

const CONNECTIONS = 50;
const SECONDS = 4;

async function main() {
  const baseline = process.argv[2];
  if (!baseline) throw new Error('usage: node bench/auth-ab.js <baseline checkout> [rounds]');
  const rounds = Number(process.argv[3] ?? 7);
  const builds = [
    { name: 'before', root: resolve(baseline), port: 5321 },
    { name: 'after', root: undefined, port: 5322 },
  ];
  const started = [];
  try {
    for (const build of builds) {
      const db = await lib.createDatabase(`tm_bench_ab_${build.name}`);
      const service = await lib.startService({ ConnectionString: db.url }, build.port, build.root);
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
