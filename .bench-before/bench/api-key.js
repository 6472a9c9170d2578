'use strict';
/**
 * Cost of API-key authentication (issue 3), in one run on this machine: requests/s of an open route
 * and of the same kind of route authenticated by x-api-key (checksum, active set, owner state read
 * at most once a second), alternated over rounds after a warm-up; the ratio is what matters (goal:
 * at least 0.90).
 * Run: npm run build && node bench/api-key.js
 */
const lib = require('./lib/service');

async function main() {
  const db = await lib.createDatabase('tm_bench_apikey');
  const service = await lib.startService({ ConnectionString: db.url }, 5321);
  try {
    const { token } = await lib.signInAdministrator(service.url);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const me = await (await fetch(`${service.url}/api/Authentication/Session`, { headers: auth })).json();
    const created = await fetch(`${service.url}/api/UserRegistry/${me.userRegistryId}/ApiKey`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'bench' }),
    });
    if (created.status !== 201) throw new Error(`key creation failed: ${created.status}`);
    const { apiKey, apiKeyDisplay } = await created.json();
    const check = await fetch(`${service.url}/api/Authentication/Session`, { headers: { 'x-api-key': apiKey } });
    if (check.status !== 200) throw new Error(`key refused: ${check.status}`);

    const rows = [];
    // The same two loads as bench/auth.js: 10 and 50 concurrent connections.
    for (const connections of [10, 50]) {
      const results = await lib.alternate(
        [
          { name: 'open route', options: { connections, url: `${service.url}/api/Authentication/PasswordPublicKey` } },
          {
            name: 'x-api-key',
            options: { connections, url: `${service.url}/api/Authentication/Session`, headers: { 'x-api-key': apiKey } },
          },
        ],
        { pid: service.pid },
      );
      rows.push(...lib.comparisonRows(results, connections));
    }
    lib.printTable(`Requests per second, key ${apiKeyDisplay} (median of 5 alternating 4 s rounds per load)`, rows);
  } finally {
    await service.stop();
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
