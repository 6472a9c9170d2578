'use strict';
/**
 * Before/after comparison of the per-request authentication cost of two builds, in one run: the
 * compiled service of another checkout (BENCH_BEFORE, a directory with dist/ and node_modules/, e.g. a
 * `git worktree` of the previous commit after `npm run build`) and of this one run side by side, each on
 * its own database, and the same targets as bench/auth.js (open route, bearer JWT, cookie JWT with
 * refresh) alternate between the two over rounds, at 10 and 50 connections. Reported per build:
 * requests/s, service CPU µs per request, and the ratio to that build's own open route (the figure
 * bench/auth.js tracks). Then password sign-in (the right password: Argon2, the lockout count, the
 * UserLogin and UserSession rows, token and cookies) against the open route at 2 connections: more
 * sign-ins of one account in flight at once than PasswordAttempts + 1 would lock it (decision 0012).
 * Run: npm run build && BENCH_BEFORE=/path/to/old/checkout node bench/compare-auth.js
 * (BENCH_ONLY=sign-in runs the sign-in comparison alone; BENCH_ROUNDS sets its rounds, default 5.)
 */
const lib = require('./lib/service');

async function main() {
  const before = process.env.BENCH_BEFORE;
  if (!before) throw new Error('BENCH_BEFORE must name the checkout to compare with');
  const builds = [
    { name: 'before', root: before, port: 5321 },
    { name: 'after', root: undefined, port: 5322 },
  ];
  for (const build of builds) {
    build.db = await lib.createDatabase('tm_bench_compare');
    build.service = await lib.startService({ ConnectionString: build.db.url }, build.port, build.root);
    build.credentials = await lib.signInAdministrator(build.service.url);
  }
  try {
    const rows = [];
    const signInOnly = process.env.BENCH_ONLY === 'sign-in';
    for (const connections of signInOnly ? [] : [10, 50]) {
      const targets = [];
      for (const kind of ['open route', 'bearer JWT', 'cookie JWT + refresh']) {
        for (const build of builds) {
          const { url } = build.service;
          const { token, cookie } = build.credentials;
          const options =
            kind === 'open route'
              ? { connections, url: `${url}/api/Authentication/PasswordPublicKey` }
              : kind === 'bearer JWT'
                ? { connections, url: `${url}/api/Authentication/Session`, headers: { authorization: `Bearer ${token}` } }
                : { connections, url: `${url}/api/Authentication/Session`, headers: { cookie, 'sec-fetch-site': 'same-origin' } };
          targets.push({ name: `${build.name}: ${kind}`, build, kind, options });
        }
      }
      // alternate() measures CPU of one process; measure each build's targets with its own pid.
      const results = await lib.alternate(targets, { pidOf: (t) => t.build.service.pid });
      for (const build of builds) {
        const own = results.filter((r) => r.name.startsWith(`${build.name}:`));
        rows.push(...lib.comparisonRows(own, connections));
      }
    }
    const signInTargets = [];
    for (const kind of ['open route', 'password sign-in']) {
      for (const build of builds) {
        const { url } = build.service;
        const options =
          kind === 'open route'
            ? { connections: 2, url: `${url}/api/Authentication/PasswordPublicKey` }
            : {
                connections: 2,
                url: `${url}/api/Authentication/ByUserNamePassword`,
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify({ userName: 'Administrator', password: 'Bench-Adm1n-Password' }),
              };
        signInTargets.push({ name: `${build.name}: ${kind}`, build, kind, options });
      }
    }
    const signInResults = await lib.alternate(signInTargets, { rounds: Number(process.env.BENCH_ROUNDS ?? 5), pidOf: (t) => t.build.service.pid });
    for (const build of builds) {
      rows.push(...lib.comparisonRows(signInResults.filter((r) => r.name.startsWith(`${build.name}:`)), 2));
    }
    lib.printTable(`Before/after: requests/s and service CPU per request (medians of alternating 4 s rounds: 5 per load, ${Number(process.env.BENCH_ROUNDS ?? 5)} for sign-in)`, rows);
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
