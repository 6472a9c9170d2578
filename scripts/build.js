#!/usr/bin/env node
'use strict';
/**
 * Builds dist/ from src/ (`tsc -p tsconfig.build.json`), or with `--if-stale` only when the build is
 * missing or older than its sources: `npm start` starts from the build and runs the compiler only after
 * a source changed (docs/decisions/0026-start-from-the-build.md). The check is one stat per source
 * file, a few milliseconds, no compiler loaded.
 *
 *   node scripts/build.js                          always (npm run build, npm run start:dev)
 *   node scripts/build.js --if-stale               what `npm start` does first (scripts/start.js
 *                                                  calls build() in its own process: no second node)
 *   node scripts/build.js --if-stale --if-possible npm install (prepare): without TypeScript (an
 *                                                  install with --omit=dev) it says so and goes on
 *
 * The build is stale when a file under src/ or a tsconfig is newer than dist/.build-stamp, or when the
 * list of sources changed (a file added, removed or renamed: dist/ is then emptied first, so no output
 * of a removed source lingers). The stamp is dated when the compiler started, so a file saved during a
 * build makes the next start build again.
 */
const { spawnSync } = require('node:child_process');
const { mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const ROOT = join(__dirname, '..');
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const CONFIGS = ['tsconfig.json', 'tsconfig.build.json'].map((name) => join(ROOT, name));

/** Every .ts file under `dir`, relative to ROOT, sorted. */
function sources(dir = join(ROOT, 'src'), found = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sources(path, found);
    else if (entry.name.endsWith('.ts')) found.push(relative(ROOT, path));
  }
  return found.sort();
}

/** Why the build must run, or null when it is up to date. */
function staleness(list) {
  let stamp;
  try {
    stamp = { mtimeMs: statSync(STAMP).mtimeMs, list: JSON.parse(readFileSync(STAMP, 'utf8')) };
  } catch {
    return 'no build yet';
  }
  if (JSON.stringify(stamp.list) !== JSON.stringify(list)) return 'the list of sources changed';
  for (const file of [...list.map((name) => join(ROOT, name)), ...CONFIGS]) {
    if (statSync(file).mtimeMs > stamp.mtimeMs) return `${relative(ROOT, file)} changed`;
  }
  return null;
}

/** Builds as the arguments say; the exit code (0: the build is there and current). */
function build(argv) {
  const args = new Set(argv);
  const list = sources();
  const reason = args.has('--if-stale') ? staleness(list) : 'asked';
  if (reason === null) return 0;
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    const message = 'cannot build dist/: TypeScript is not installed (run npm install with the devDependencies)';
    if (args.has('--if-possible')) {
      console.warn(`${message}; npm start will build it`);
      return 0;
    }
    console.error(message);
    return 1;
  }
  if (reason !== 'asked') console.log(`building dist/ (${reason})`);
  let previous = null;
  try {
    previous = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    // no stamp: an earlier build (or none) of unknown sources
  }
  if (JSON.stringify(previous) !== JSON.stringify(list)) rmSync(DIST, { recursive: true, force: true });
  const started = new Date();
  const result = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    // A failed build leaves no stamp: the next start tries again.
    rmSync(STAMP, { force: true });
    return result.status ?? 1;
  }
  mkdirSync(DIST, { recursive: true });
  writeFileSync(STAMP, `${JSON.stringify(list)}\n`);
  utimesSync(STAMP, started, started);
  return 0;
}

module.exports = { build };

if (require.main === module) process.exitCode = build(process.argv.slice(2));
