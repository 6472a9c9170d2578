import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { DataDirectoryInUse, lockDataDirectory } from '../src/database/data-directory-lock';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';

const ANSI = /\u001b\[/;

/** A TCP proxy of our own between the service and PostgreSQL, so a test can cut the database away. */
async function startProxy(target: URL): Promise<{ url: string; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = new Socket();
    upstream.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = new URL(target.toString());
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    async cut() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The pid of a process that has ended (a stale lock's owner). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/**
 * What a person sees on the first start, with the real entry point in its own process and its output
 * piped (as under a service manager): plain lines, the address to open, one process per data
 * directory, JSON lines on request, and a database outage that does not flood the log.
 */
describe('first start, as a separate process', () => {
  let first: ServiceProcess | undefined;
  afterEach(async () => {
    await first?.stop();
    first = undefined;
  });

  it('writes plain lines off a terminal, names http://localhost:<port>, and a second process on the data directory refuses at once', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-first-start-'));
    first = startServiceProcess({ DataDirectory: dataDirectory, Port: '0' });
    const [, url] = await first.waitFor(/listening on (\S+)/);
    expect(url).toMatch(/^http:\/\/localhost:\d+$/);
    expect(url).not.toMatch(/:0$/);
    const login = await fetch(`${url}/Account/Login`);
    expect(login.status).toBe(200);
    const output = first.stdout() + first.stderr();
    expect(output).not.toMatch(ANSI);
    // The start reads as a handful of lines, not one per module and route.
    expect(output).toContain('embedded PostgreSQL (PGlite) at');
    expect(output).not.toContain('RouterExplorer');
    expect(output).not.toContain('InstanceLoader');

    const lockFile = join(dataDirectory, 'pglite.pid');
    expect(readFileSync(lockFile, 'utf8').split('\n')[0]).toBe(String(first.child.pid));

    const second = startServiceProcess({ DataDirectory: dataDirectory, Port: '0' });
    expect(await second.exited()).toBe(75);
    expect(second.stdout()).toBe('');
    expect(second.stderr()).toBe(
      `Refusing to start: the embedded database ${join(dataDirectory, 'pglite')} is in use by process ${first.child.pid} ` +
        `(lock file ${lockFile}); stop that process first, or set ConnectionString\n`,
    );
    // The first one is unaffected.
    expect((await fetch(`${url}/Account/Login`)).status).toBe(200);

    expect(await first.stop()).toBe(0);
    first = undefined;
    expect(existsSync(lockFile)).toBe(false);
  }, 240_000);

  describe('with LogFormat=json on PostgreSQL', () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase();
    });
    afterAll(async () => {
      await db.drop();
    });

    it('writes one JSON object per line, and a refused request per second while the database is down once with a count', async () => {
      const proxy = await startProxy(new URL(db.url));
      first = startServiceProcess({
        ConnectionString: proxy.url,
        DataDirectory: mkdtempSync(join(tmpdir(), 'tm-json-')),
        Port: '0',
        LogFormat: 'json',
      });
      const [, url] = await first.waitFor(/"message":"listening on (http:[^"]+)"/);
      expect(url).toMatch(/^http:\/\/localhost:\d+$/);
      const browser = new Browser(url);
      const signIn = await browser.post('/api/Authentication/ByUserNamePassword', {
        userName: 'Administrator',
        password: 'Administrator',
        newPassword: 'Json-Adm1n-Password',
        repeatNewPassword: 'Json-Adm1n-Password',
      });
      expect(signIn.status).toBe(200);
      const token = signIn.json.token as string;
      expect((await browser.get('/api/Authentication/Session', { authorization: `Bearer ${token}` })).status).toBe(200);

      await proxy.cut();
      const refused = 20;
      for (let i = 0; i < refused; i++) {
        const res = await new Browser(url, {}).get('/api/Authentication/Session', { authorization: `Bearer ${token}` });
        expect(res.status).toBe(503);
      }
      expect(await first.stop()).toBe(0);

      const lines = (first.stdout() + first.stderr()).split('\n').filter((line) => line !== '');
      expect(lines.length).toBeGreaterThan(3);
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      for (const record of records) {
        expect(Object.keys(record).slice(0, 4)).toEqual(['timestamp', 'level', 'context', 'message']);
        expect(new Date(record.timestamp as string).toISOString()).toBe(record.timestamp);
        expect(['error', 'warn', 'log']).toContain(record.level);
      }
      // Each refused request was counted, but written once per distinct error, then once with a count.
      const refusals = records.filter((r) => String(r.message).includes('user row read failed'));
      expect(refusals.length).toBeLessThanOrEqual(4);
      const counted = refusals.reduce((sum, r) => {
        const repeated = /\[repeated (\d+) more times? in the last \d+ s\]$/.exec(String(r.message));
        return sum + (repeated ? Number(repeated[1]) : 1);
      }, 0);
      expect(counted).toBe(refused);
      expect(refusals.some((r) => /\[repeated \d+ more times/.test(String(r.message)))).toBe(true);
    }, 240_000);
  });
});

describe('data directory lock', () => {
  it('takes over a stale lock left by a process that is gone, and releases it on close', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-stale-lock-'));
    const lockFile = join(dataDirectory, 'pglite.pid');
    const gone = deadPid();
    writeFileSync(lockFile, `${gone}\n2026-11-23T00:00:00.000Z\n`);

    const settings = resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error' }));
    const app = await createApp(settings, { logger: ['error'] });
    try {
      await app.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      expect((await fetch(`${url}/Account/Login`)).status).toBe(200);
      expect(readFileSync(lockFile, 'utf8').split('\n')[0]).toBe(String(process.pid));
      // A second application in this same process is refused too.
      expect(() => lockDataDirectory(join(dataDirectory, 'pglite'))).toThrow(DataDirectoryInUse);
      expect(() => lockDataDirectory(join(dataDirectory, 'pglite'))).toThrow(/already open in this process/);
    } finally {
      await app.close();
    }
    expect(existsSync(lockFile)).toBe(false);
  }, 120_000);
});
