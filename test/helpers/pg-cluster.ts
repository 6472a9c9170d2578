import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port';

/**
 * Real PostgreSQL clusters of a test's own (issue 26): a primary and a streaming standby on free
 * loopback ports, run as the `postgres` OS user (PostgreSQL refuses to run as root), data in a
 * temporary directory owned by postgres, ended by the test (and at process exit, should the test
 * file die first). Small on purpose: 16 MB of shared buffers, few connections; fsync stays on, since
 * the drills count rows that must survive a crash.
 */

/** The newest PostgreSQL installed by the distribution's packages. */
export function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => join(root, v, 'bin')).find((bin) => existsSync(join(bin, 'pg_ctl')));
  if (!found) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (.ci/run installs them)');
  return found;
}

const postgresUid = () => Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
const postgresGid = () => Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());

/** Runs a PostgreSQL program as the postgres user; rejects with its output when it fails. */
function asPostgres(program: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('runuser', ['-u', 'postgres', '--', program, ...args], { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${program} ${args.join(' ')} failed: ${error.message}\n${stdout}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

export interface PgServer {
  readonly name: string;
  readonly port: number;
  readonly dataDirectory: string;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  start(): Promise<void>;
  /** pg_ctl stop in the given mode: `fast` as an operator stops it, `immediate` as a crash. */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Sets parameters in postgresql.auto.conf (written by the test as the postgres user) and reloads. */
  configure(parameters: Record<string, string>): Promise<void>;
  promote(): Promise<void>;
  /** The server's log, for a failure's message. */
  log(): string;
}

export interface PgPair {
  primary: PgServer;
  standby: PgServer;
  /** Stops both (immediately) and removes their data. */
  destroy(): Promise<void>;
}

function server(bin: string, root: string, name: string, port: number): PgServer {
  const dataDirectory = join(root, name);
  const logFile = join(root, `${name}.log`);
  const pgCtl = join(bin, 'pg_ctl');
  const self: PgServer = {
    name,
    port,
    dataDirectory,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres(pgCtl, ['-D', dataDirectory, '-l', logFile, '-w', '-t', '60', '-o', `-p ${port} -k ${root}`, 'start']);
    },
    async stop(mode) {
      await asPostgres(pgCtl, ['-D', dataDirectory, '-m', mode, '-w', '-t', '60', 'stop']);
    },
    async configure(parameters) {
      const lines = Object.entries(parameters).map(([key, value]) => `${key} = '${value.replace(/'/g, "''")}'`);
      await asPostgres('sh', ['-c', `printf '%s\\n' "$@" >> ${join(dataDirectory, 'postgresql.auto.conf')}`, 'sh', ...lines]);
      if (existsSync(join(dataDirectory, 'postmaster.pid'))) await asPostgres(pgCtl, ['-D', dataDirectory, 'reload']);
    },
    async promote() {
      await asPostgres(pgCtl, ['-D', dataDirectory, '-w', '-t', '60', 'promote']);
    },
    log() {
      return spawnSync('tail', ['-n', '40', logFile], { encoding: 'utf8' }).stdout;
    },
  };
  return self;
}

/**
 * A primary (initdb) and a standby (pg_basebackup -R, streaming) started and in sync. The primary's
 * `synchronous_standby_names` is '*': every commit waits until the standby has flushed it (what an
 * operator sets when no answered write may be lost in a failover).
 */
export async function startPrimaryAndStandby(): Promise<PgPair> {
  const bin = postgresBin();
  const root = mkdtempSync(join(tmpdir(), 'tm-ha-'));
  chownSync(root, postgresUid(), postgresGid());
  const primary = server(bin, root, 'primary', await freePort());
  const standby = server(bin, root, 'standby', await freePort());
  const destroy = async () => {
    for (const s of [standby, primary]) {
      if (existsSync(join(s.dataDirectory, 'postmaster.pid'))) await s.stop('immediate').catch(() => undefined);
    }
    rmSync(root, { recursive: true, force: true });
  };
  // Should the test process die before its afterAll, the clusters still end with it.
  const atExit = () => {
    for (const s of [standby, primary]) spawnSync('runuser', ['-u', 'postgres', '--', join(bin, 'pg_ctl'), '-D', s.dataDirectory, '-m', 'immediate', 'stop']);
  };
  process.once('exit', atExit);
  try {
    await asPostgres(join(bin, 'initdb'), ['-D', primary.dataDirectory, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], 120_000);
    await primary.configure({
      listen_addresses: '127.0.0.1',
      shared_buffers: '16MB',
      max_connections: '60',
      wal_level: 'replica',
      max_wal_senders: '4',
      synchronous_standby_names: '*',
      synchronous_commit: 'on',
      fsync: 'on',
      wal_keep_size: '64MB',
      log_min_messages: 'warning',
    });
    await primary.start();
    await asPostgres(join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', standby.dataDirectory, '-R', '-X', 'stream', '--no-sync', '-c', 'fast'], 120_000);
    await standby.configure({ hot_standby: 'on' });
    await standby.start();
  } catch (error) {
    await destroy();
    throw error;
  }
  return {
    primary,
    standby,
    async destroy() {
      process.off('exit', atExit);
      await destroy();
    },
  };
}
