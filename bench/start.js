'use strict';
/**
 * How long `npm start` takes to listen on the embedded default (issue 33): the time from spawning
 * `npm start` to its `listening on` line, for a first start on a new DataDirectory (the embedded
 * database created, migrated and seeded) and for restarts on the same DataDirectory (what a restart
 * after a crash or a settings change waits for). No ConnectionString: the embedded PGlite; Port 0 so a
 * running service is not in the way. Each start is stopped with SIGTERM once it listens.
 * Run: node bench/start.js [restarts, default 5] [another checkout, built, e.g. of an earlier commit]
 * With a second checkout, its restarts alternate with this one's (each on its own DataDirectory), so
 * both see the same load; the medians of both are printed.
 */
const { spawn } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

/**
 * CPU seconds spent so far by process group `group` (npm, its shell, node; with the children they
 * already waited for, e.g. the compiler of a prestart): what the start costs, apart from how busy the
 * machine is (the wall time depends on it; the machine is shared).
 */
function cpuSecondsOf(group) {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let fields;
    try {
      fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    } catch {
      continue;
    }
    // After "pid (comm) ": state ppid pgrp ... utime(12) stime(13) cutime(14) cstime(15), 0-based here.
    if (Number(fields[2]) !== group) continue;
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return ticks / 100;
}

/** Whether any process of group `group` is still running (npm may exit before the node it started). */
function groupAlive(group) {
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[2]) === group && fields[0] !== 'Z') return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

/** Resolves once every process of `group` has ended: the next start must not find the database still held. */
async function groupEnded(group) {
  for (let i = 0; i < 600 && groupAlive(group); i++) await new Promise((resolve) => setTimeout(resolve, 50));
}

function start(dataDirectory, root = ROOT) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('npm', ['start'], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DataDirectory: dataDirectory, Port: '0', BindAddress: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    const onData = (chunk) => {
      out += chunk;
      if (/listening on/.test(out)) {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const cpu = cpuSecondsOf(child.pid);
        child.stdout.off('data', onData);
        // npm and its shell in one process group: stopped together, as Ctrl+C would.
        process.kill(-child.pid, 'SIGTERM');
        child.once('exit', () => void groupEnded(child.pid).then(() => resolve({ ms, cpu, built: /building dist|tsc -p/.test(out) })));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => {
      if (!/listening on/.test(out)) reject(new Error(`npm start exited (${code}) before listening:\n${out}`));
    });
  });
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main() {
  const restarts = Number(process.argv[2] || 5);
  const roots = [ROOT, ...(process.argv[3] ? [require('node:path').resolve(process.argv[3])] : [])];
  const show = (run) => `${(run.ms / 1000).toFixed(1)} s, ${run.cpu.toFixed(1)} CPU s${run.built ? ' (compiled)' : ''}`;
  const load = () => require('node:os').loadavg().map((n) => n.toFixed(1)).join(' ');
  console.log(`load average ${load()} on ${require('node:os').cpus().length} cores`);
  const runs = new Map();
  for (const root of roots) {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-bench-start-'));
    const first = await start(dataDirectory, root);
    console.log(`${root}: first start (new DataDirectory): ${show(first)}`);
    runs.set(root, { dataDirectory, restarts: [] });
  }
  for (let i = 0; i < restarts; i++) {
    for (const root of i % 2 === 0 ? roots : [...roots].reverse()) {
      const again = await start(runs.get(root).dataDirectory, root);
      runs.get(root).restarts.push(again);
      console.log(`${root}: restart ${i + 1}: ${show(again)}`);
    }
  }
  for (const root of roots) {
    const times = runs.get(root).restarts;
    const ms = times.map((r) => r.ms);
    const cpu = times.map((r) => r.cpu);
    console.log(
      `${root}: restarts: median ${(median(ms) / 1000).toFixed(1)} s (${(Math.min(...ms) / 1000).toFixed(1)}-${(Math.max(...ms) / 1000).toFixed(1)}), ` +
        `median ${median(cpu).toFixed(2)} CPU s (${Math.min(...cpu).toFixed(2)}-${Math.max(...cpu).toFixed(2)})`,
    );
  }
  console.log(`load average ${load()} at the end`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
