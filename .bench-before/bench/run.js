'use strict';
/**
 * Runs every benchmark in turn (`npm run bench`, which builds first); each prints its own table.
 * Results with the machine and date are kept in bench/RESULTS.md.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

const BENCHMARKS = ['auth.js', 'api-key.js', 'revocation.js', 'reads.js'];
let failed = 0;
for (const name of BENCHMARKS) {
  console.log(`\n=== bench/${name}`);
  const result = spawnSync(process.execPath, [join(__dirname, name)], { stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed === 0 ? 0 : 1);
