import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real Redis master, one replica and three Sentinels on free loopback ports, started by a test and
 * ended by it (and, should the test runner die first, by this process's exit). Configuration and data
 * go to one 0700 temporary folder: Sentinels rewrite their own configuration file as they learn.
 *
 * Debian's `redis-server` runs as a Sentinel with `--sentinel` (the `redis-sentinel` package only adds
 * a symlink and a service unit). Timings are short so that a failover takes a few seconds.
 */
export interface SentinelCluster {
  masterName: string;
  /** Port of each Redis, the master first (as started; a failover changes which is master). */
  redisPorts: number[];
  sentinelPorts: number[];
  /** `sentinel://…` naming every Sentinel, with the passwords when the cluster has them. */
  url: string;
  /** The address the Sentinels name as master now (`SENTINEL get-master-addr-by-name`), asked of any live one. */
  masterAddress(): string | null;
  /** A redis-cli command to the Redis or Sentinel on `port` (with its password), its output. */
  command(port: number, ...args: string[]): string;
  /** SIGKILL of the Redis on `port` or of the Sentinel on `port`. */
  kill(port: number): void;
  stop(): Promise<void>;
}

export interface SentinelClusterOptions {
  /** requirepass/masterauth of the two Redis (and `sentinel auth-pass`). */
  redisPassword?: string;
  /** requirepass of the Sentinels themselves. */
  sentinelPassword?: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

function cli(port: number, password: string | undefined, args: string[]): string {
  return execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...(password ? ['--no-auth-warning', '-a', password] : []), ...args], {
    encoding: 'utf8',
    timeout: 5_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

async function until(check: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      if (check()) return;
    } catch {
      // not up yet
    }
    if (Date.now() > end) throw new Error(`the Sentinel cluster: ${what} did not happen in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function startSentinelCluster(options: SentinelClusterOptions = {}): Promise<SentinelCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'tm-sentinel-'));
  chmodSync(dir, 0o700);
  const masterName = 'tm-master';
  const redisPorts = [await freePort(), await freePort()];
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const children = new Map<number, ChildProcess>();
  const start = (port: number, args: string[]) => {
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    running.add(child);
    child.once('exit', () => running.delete(child));
    children.set(port, child);
  };
  for (const [i, port] of redisPorts.entries()) {
    const file = join(dir, `redis-${port}.conf`);
    // The password in the 0600 file, not on the command line (`ps` shows that to every user).
    writeFileSync(file, options.redisPassword ? `requirepass ${options.redisPassword}\nmasterauth ${options.redisPassword}\n` : '', { mode: 0o600 });
    start(port, [
      file,
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--dbfilename', `dump-${port}.rdb`],
      ...(i > 0 ? ['--replicaof', '127.0.0.1', String(redisPorts[0])] : []),
    ]);
  }
  await until(() => cli(redisPorts[1], options.redisPassword, ['info', 'replication']).includes('master_link_status:up'), 'replication');
  for (const port of sentinelPorts) {
    const file = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${redisPorts[0]} 2`,
        `sentinel down-after-milliseconds ${masterName} 1000`,
        `sentinel failover-timeout ${masterName} 4000`,
        `sentinel parallel-syncs ${masterName} 1`,
        ...(options.redisPassword ? [`sentinel auth-pass ${masterName} ${options.redisPassword}`] : []),
        ...(options.sentinelPassword ? [`requirepass ${options.sentinelPassword}`, `sentinel sentinel-pass ${options.sentinelPassword}`] : []),
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    start(port, [file, '--sentinel']);
  }
  // Every Sentinel has found the replica and the two other Sentinels.
  await until(
    () =>
      sentinelPorts.every((port) => {
        const master = cli(port, options.sentinelPassword, ['sentinel', 'master', masterName]);
        const fields = master.split('\n');
        const field = (name: string) => fields[fields.indexOf(name) + 1];
        return field('num-slaves') === '1' && field('num-other-sentinels') === '2';
      }),
    'Sentinel discovery',
  );

  const encode = encodeURIComponent;
  const userinfo = options.redisPassword ? `:${encode(options.redisPassword)}@` : '';
  const query = options.sentinelPassword ? `?sentinelPassword=${encode(options.sentinelPassword)}` : '';
  const url = `sentinel://${userinfo}${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${masterName}${query}`;

  return {
    masterName,
    redisPorts,
    sentinelPorts,
    url,
    masterAddress() {
      for (const port of sentinelPorts) {
        const child = children.get(port);
        if (!child || child.exitCode !== null || child.signalCode !== null) continue;
        try {
          return cli(port, options.sentinelPassword, ['sentinel', 'get-master-addr-by-name', masterName]).split('\n').join(':');
        } catch {
          // try the next Sentinel
        }
      }
      return null;
    },
    command(port: number, ...args: string[]) {
      return cli(port, sentinelPorts.includes(port) ? options.sentinelPassword : options.redisPassword, args);
    },
    kill(port: number) {
      children.get(port)?.kill('SIGKILL');
    },
    async stop() {
      await Promise.all(
        [...children.values()].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGKILL');
            }),
        ),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
