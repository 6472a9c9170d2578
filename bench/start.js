'use strict';
/**
 * How long `npm start` takes to listen on the embedded default (issue 33): the time from spawning
 * `npm start` to its `listening on` line, for a first start on a new DataDirectory (the embedded
 * database created, migrated and seeded) and for restarts on the same DataDirectory (what a restart
 * after a crash or a settings change waits for). No ConnectionString: the embedded PGlite; Port 0 so a
 * running service is not in the way. Each start is stopped with SIGTERM once it listens.
 * Run: node bench/start.js [restarts, default 5]
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

function start(dataDirectory) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('npm', ['start'], {
      cwd: ROOT,
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
        child.once('exit', () => resolve({ ms, cpu, built: /building dist|tsc -p/.test(out) }));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk) => (out += chunk));
    child.once('exit', (code) => {
      if (!/listening on/.test(out)) reject(new Error(`npm start exited (${code}) before listening:\n${out}`));
    });
  });
}

async function main() {
  const restarts = Number(process.argv[2] || 5);
  const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-bench-start-'));
  const first = await start(dataDirectory);
  const show = (run) => `${(run.ms / 1000).toFixed(1)} s, ${run.cpu.toFixed(1)} CPU s${run.built ? ' (compiled)' : ''}`;
  console.log(`load average ${require('node:os').loadavg().map((n) => n.toFixed(1)).join(' ')} on ${require('node:os').cpus().length} cores`);
  console.log(`first start (new DataDirectory): ${show(first)}`);
  const times = [];
  for (let i = 0; i < restarts; i++) {
    const again = await start(dataDirectory);
    times.push(again.ms);
    console.log(`restart ${i + 1}: ${show(again)}`);
  }
  times.sort((a, b) => a - b);
  console.log(`restarts: median ${(times[Math.floor(times.length / 2)] / 1000).toFixed(1)} s, max ${(times[times.length - 1] / 1000).toFixed(1)} s`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
