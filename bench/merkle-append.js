'use strict';
/**
 * Issue 29: the service's part of sealing, CompactRange.appendAll (the tree's interior hashes) over
 * 100,000 leaves, this build against another checkout's, in one process: alternating runs after a
 * warm-up, CPU time of this thread (process.cpuUsage), medians. The roots must be equal.
 *
 * Run: npm run build && node bench/merkle-append.js <other checkout with dist/> [runs]
 */
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');

const LEAVES = 100_000;

function main() {
  const other = process.argv[2];
  if (!other) throw new Error('usage: node bench/merkle-append.js <other checkout with dist/> [runs]');
  const runs = Number(process.argv[3] ?? 15);
  const builds = [
    { name: 'this build', CompactRange: require(join(__dirname, '..', 'dist', 'audit-log', 'merkle.js')).CompactRange, samples: [] },
    { name: `other (${other})`, CompactRange: require(join(other, 'dist', 'audit-log', 'merkle.js')).CompactRange, samples: [] },
  ];
  const leaves = randomBytes(32 * LEAVES);
  // As the sealer asks: every fourth level kept (AuditTreeRepository.kept).
  const kept = (level) => level > 0 && level % 4 === 0;
  const run = (build) => {
    const range = new build.CompactRange(0, []);
    const before = process.cpuUsage();
    range.appendAll(leaves, () => {}, kept);
    const used = process.cpuUsage(before);
    return { us: (used.user + used.system) / LEAVES, root: range.root().toString('hex') };
  };
  for (let i = 0; i < 3; i++) for (const build of builds) run(build);
  for (let i = 0; i < runs; i++) {
    const [a, b] = (i % 2 === 0 ? builds : [...builds].reverse()).map((build) => ({ build, ...run(build) }));
    if (a.root !== b.root) throw new Error('the two builds give different roots');
    a.build.samples.push(a.us);
    b.build.samples.push(b.us);
  }
  const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  console.log(`\nCompactRange.appendAll of ${LEAVES.toLocaleString('en')} leaves, ${runs} alternating runs (same roots)`);
  console.table(builds.map((b) => ({ build: b.name, 'µs a leaf (median)': median(b.samples).toFixed(3), samples: b.samples.map((s) => s.toFixed(2)).join(' ') })));
}

main();
