import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * A real Redis master, its replicas and Sentinels on free loopback ports, started by a test and
 * ended by it (and, should the test runner die first, by this process's exit). Configuration, data
 * and certificates go to one 0700 temporary folder: Sentinels rewrite their own configuration file
 * as they learn.
 *
 * Debian's `redis-server` runs as a Sentinel with `--sentinel` (the `redis-sentinel` package only adds
 * a symlink and a service unit). Timings are short so that a failover takes a few seconds.
 */
export interface SentinelCluster {
  masterName: string;
  /** Port of each Redis, the master first (as started; a failover changes which is master). */
  redisPorts: number[];
  sentinelPorts: number[];
  /** `sentinel://…` (`sentinels://…` with TLS) naming every Sentinel, with the passwords when the cluster has them. */
  url: string;
  /** With TLS: the self-signed certificate (for 127.0.0.1) every server presents, to trust it. */
  certificateFile: string | null;
  /** The address the Sentinels name as master now (`SENTINEL get-master-addr-by-name`), asked of any live one. */
  masterAddress(): string | null;
  /** A redis-cli command to the Redis or Sentinel on `port` (with its password), its output. */
  command(port: number, ...args: string[]): string;
  /** SIGKILL of the Redis on `port` or of the Sentinel on `port`. */
  kill(port: number): void;
  stop(): Promise<void>;
}

export interface SentinelClusterOptions {
  /** requirepass/masterauth of the Redis (and `sentinel auth-pass`). */
  redisPassword?: string;
  /** requirepass of the Sentinels themselves. */
  sentinelPassword?: string;
  /** Replicas of the master (default 1). */
  replicas?: number;
  /** Sentinels (default 3; quorum 2, or 1 for a single Sentinel). */
  sentinels?: number;
  /** Every server (Redis and Sentinels) speaks TLS only, replication included. */
  tls?: boolean;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

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
  const redisPorts: number[] = [];
  for (let i = 0; i <= (options.replicas ?? 1); i++) redisPorts.push(await freePort());
  const sentinelPorts: number[] = [];
  for (let i = 0; i < (options.sentinels ?? 3); i++) sentinelPorts.push(await freePort());
  const children = new Map<number, ChildProcess>();
  const stop = async () => {
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
  };

  try {
    let certificateFile: string | null = null;
    let tlsLines: string[] = [];
    if (options.tls) {
      certificateFile = join(dir, 'redis.crt');
      const keyFile = join(dir, 'redis.key');
      // prettier-ignore
      execFileSync('openssl', [
        'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certificateFile, '-days', '2',
        '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
      ], { stdio: 'ignore' });
      chmodSync(keyFile, 0o600);
      tlsLines = [
        `tls-cert-file ${certificateFile}`,
        `tls-key-file ${keyFile}`,
        `tls-ca-cert-file ${certificateFile}`,
        'tls-auth-clients no',
        'tls-replication yes',
      ];
    }
    const listen = (port: number) => (options.tls ? ['port 0', `tls-port ${port}`, ...tlsLines] : [`port ${port}`]);
    const cli = (port: number, password: string | undefined, args: string[]): string =>
      execFileSync(
        'redis-cli',
        [
          ...['-h', '127.0.0.1', '-p', String(port)],
          ...(certificateFile ? ['--tls', '--cacert', certificateFile] : []),
          ...(password ? ['--no-auth-warning', '-a', password] : []),
          ...args,
        ],
        { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'pipe'] },
      ).trim();
    const start = (port: number, lines: string[], extra: string[] = []) => {
      const file = join(dir, `${port}.conf`);
      // Passwords in the 0600 file, not on the command line (`ps` shows that to every user).
      writeFileSync(file, [...lines, ''].join('\n'), { mode: 0o600 });
      const child = spawn('redis-server', [file, ...extra], { stdio: 'ignore' });
      running.add(child);
      child.once('exit', () => running.delete(child));
      children.set(port, child);
    };

    for (const [i, port] of redisPorts.entries()) {
      start(port, [
        ...listen(port),
        'bind 127.0.0.1',
        'save ""',
        'appendonly no',
        `dir ${dir}`,
        `dbfilename dump-${port}.rdb`,
        ...(options.redisPassword ? [`requirepass ${options.redisPassword}`, `masterauth ${options.redisPassword}`] : []),
        ...(i > 0 ? [`replicaof 127.0.0.1 ${redisPorts[0]}`] : []),
      ]);
    }
    for (const port of redisPorts.slice(1)) {
      await until(() => cli(port, options.redisPassword, ['info', 'replication']).includes('master_link_status:up'), 'replication');
    }
    for (const port of sentinelPorts) {
      start(
        port,
        [
          ...listen(port),
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${masterName} 127.0.0.1 ${redisPorts[0]} ${Math.min(2, sentinelPorts.length)}`,
          `sentinel down-after-milliseconds ${masterName} 1000`,
          `sentinel failover-timeout ${masterName} 4000`,
          `sentinel parallel-syncs ${masterName} 1`,
          ...(options.redisPassword ? [`sentinel auth-pass ${masterName} ${options.redisPassword}`] : []),
          ...(options.sentinelPassword ? [`requirepass ${options.sentinelPassword}`, `sentinel sentinel-pass ${options.sentinelPassword}`] : []),
        ],
        ['--sentinel'],
      );
    }
    // Every Sentinel has found the replicas and the other Sentinels (a failover needs both).
    await until(
      () =>
        sentinelPorts.every((port) => {
          const fields = cli(port, options.sentinelPassword, ['sentinel', 'master', masterName]).split('\n');
          const field = (name: string) => fields[fields.indexOf(name) + 1];
          return field('num-slaves') === String(redisPorts.length - 1) && field('num-other-sentinels') === String(sentinelPorts.length - 1);
        }),
      'Sentinel discovery',
    );

    const encode = encodeURIComponent;
    const userinfo = options.redisPassword ? `:${encode(options.redisPassword)}@` : '';
    const query = options.sentinelPassword ? `?sentinelPassword=${encode(options.sentinelPassword)}` : '';
    const scheme = options.tls ? 'sentinels' : 'sentinel';
    const url = `${scheme}://${userinfo}${sentinelPorts.map((p) => `127.0.0.1:${p}`).join(',')}/${masterName}${query}`;

    return {
      masterName,
      redisPorts,
      sentinelPorts,
      url,
      certificateFile,
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
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
