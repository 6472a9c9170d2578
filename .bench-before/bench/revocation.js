'use strict';
/**
 * Propagation of an API key revocation between two nodes (issue 3): both nodes on one PostgreSQL
 * database and one Redis; 200 keys are created on node A and honoured by node B; then each key in
 * turn is revoked on node A (DELETE sent at t0) while node B is asked in a tight loop until it
 * answers 401; the delay is t(first 401 on B) - t0. Goal: p99 at most 100 ms.
 * Run: npm run build && node bench/revocation.js   (Redis on 127.0.0.1:6379, or BENCH_REDIS_URL)
 */
const lib = require('./lib/service');

const REDIS = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const KEYS = 200;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  const db = await lib.createDatabase('tm_bench_revocation');
  const a = await lib.startService({ ConnectionString: db.url, RedisConnectionString: REDIS }, 5322);
  const b = await lib.startService({ ConnectionString: db.url, RedisConnectionString: REDIS }, 5323);
  try {
    const { token } = await lib.signInAdministrator(a.url);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const me = await (await fetch(`${a.url}/api/Authentication/Session`, { headers: auth })).json();
    const onB = async (apiKey) => (await fetch(`${b.url}/api/Authentication/Session`, { headers: { 'x-api-key': apiKey } })).status;

    const keys = [];
    for (let i = 0; i < KEYS; i++) {
      const res = await fetch(`${a.url}/api/UserRegistry/${me.userRegistryId}/ApiKey`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `k${i}` }) });
      if (res.status !== 201) throw new Error(`key creation failed: ${res.status}`);
      keys.push(await res.json());
    }
    for (const key of keys) {
      for (let tries = 0; (await onB(key.apiKey)) !== 200; tries++) {
        if (tries > 400) throw new Error('node B never accepted a key');
        await new Promise((r) => setTimeout(r, 5));
      }
    }

    const delays = [];
    let polls = 0;
    for (const key of keys) {
      const t0 = process.hrtime.bigint();
      const revoked = fetch(`${a.url}/api/UserRegistry/${me.userRegistryId}/ApiKey/${key.id}`, { method: 'DELETE', headers: auth });
      for (;;) {
        polls++;
        if ((await onB(key.apiKey)) === 401) break;
        if (Number(process.hrtime.bigint() - t0) > 120e9) throw new Error('node B never refused a revoked key');
      }
      delays.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if ((await revoked).status !== 204) throw new Error('revocation failed');
    }
    const sorted = [...delays].sort((x, y) => x - y);
    lib.printTable(`Revocation on node A until node B refuses the key (${KEYS} revocations, Redis pub/sub)`, [
      {
        p50: `${percentile(sorted, 50).toFixed(1)} ms`,
        p90: `${percentile(sorted, 90).toFixed(1)} ms`,
        p99: `${percentile(sorted, 99).toFixed(1)} ms`,
        max: `${sorted[sorted.length - 1].toFixed(1)} ms`,
        'polls of B': polls,
      },
    ]);
  } finally {
    await Promise.all([a.stop(), b.stop()]);
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
