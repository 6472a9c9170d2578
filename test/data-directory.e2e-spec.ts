import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spoolPath } from '../src/common/json-lines-spool';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { signInAdministrator } from './helpers/users';

/**
 * The default install keeps its data to itself (issue 25): whatever umask the service is started with
 * and however DataDirectory was made, once the service has run nothing under it is readable, writable
 * or searchable by group or other (checked with lstat on every path, the way another local user would
 * find out); a DataDirectory of another user is refused with one line; a link planted where a secret or
 * the spool will be written is never followed: the start refuses, naming it, and the target outside is
 * untouched.
 */

/** Every path under `root` (the root included) with its permission bits, without following links. */
function modes(root: string): Map<string, number> {
  const found = new Map<string, number>();
  const walk = (path: string) => {
    const stats = lstatSync(path);
    found.set(path, stats.mode & 0o7777);
    if (stats.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return found;
}

/** The paths another user could read, write or search: group or other bits set. */
const openToOthers = (root: string) =>
  [...modes(root)].filter(([, mode]) => (mode & 0o077) !== 0).map(([path, mode]) => `${path} ${mode.toString(8)}`);

/** A DataDirectory made as a newcomer would, `mkdir data` under umask 022: mode 0755. */
function newcomerDirectory(prefix: string): string {
  const directory = join(mkdtempSync(join(tmpdir(), prefix)), 'data');
  mkdirSync(directory);
  chmodSync(directory, 0o755);
  return directory;
}

describe('DataDirectory is for the service user only', () => {
  const processes: ServiceProcess[] = [];
  let umask: number;
  beforeAll(() => {
    // The usual umask of a shell: the service must not depend on it.
    umask = process.umask(0o022);
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    process.umask(umask);
  });

  const start = async (env: Record<string, string>) => {
    const p = startServiceProcess({ Port: '0', BindAddress: '127.0.0.1', SignInThrottle: '0', ...env });
    processes.push(p);
    const [, url] = await p.waitFor(/listening on (\S+)/);
    return { process: p, url: url.replace('localhost', '127.0.0.1') };
  };

  it('embedded default: a 0755 directory with older files in it is made private, and stays so after sign-in and a restart', async () => {
    const dataDirectory = newcomerDirectory('tm-datadir-');
    // What an older version left: a world-readable secrets file and folder.
    writeFileSync(join(dataDirectory, 'secrets.json'), '{}', { mode: 0o644 });
    chmodSync(join(dataDirectory, 'secrets.json'), 0o666);
    mkdirSync(join(dataDirectory, 'spool'), { mode: 0o755 });
    expect(openToOthers(dataDirectory)).toHaveLength(3);

    const first = await start({ DataDirectory: dataDirectory, Instance: 'datadir-node' });
    // One INFO line says what was changed.
    const said = (first.process.stdout() + first.process.stderr()).split('\n').filter((line) => line.includes('took group and other permissions away'));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`DataDirectory ${dataDirectory} was readable or writable by other users`);
    const { browser } = await signInAdministrator(first);
    expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
    // The process lock exists while it runs, private like the rest.
    expect(existsSync(join(dataDirectory, 'pglite.pid'))).toBe(true);
    expect(openToOthers(dataDirectory)).toEqual([]);
    expect(await first.process.stop()).toBe(0);

    const second = await start({ DataDirectory: dataDirectory, Instance: 'datadir-node' });
    // Nothing left to change: no second INFO line.
    expect(second.process.stdout() + second.process.stderr()).not.toContain('took group and other permissions away');
    // The session signed in before the restart is still valid (the generated secret was kept).
    const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    expect((await new Browser(second.url).get('/api/Authentication/Session', { cookie })).status).toBe(200);
    await signInAdministrator(second);
    const paths = modes(dataDirectory);
    // The embedded database, its lock and the generated secrets are all there, and all private.
    expect(paths.size).toBeGreaterThan(100);
    expect([...paths.keys()]).toEqual(expect.arrayContaining([join(dataDirectory, 'pglite', 'PG_VERSION'), join(dataDirectory, 'secrets.json'), join(dataDirectory, 'pglite.pid')]));
    expect(openToOthers(dataDirectory)).toEqual([]);
    expect(paths.get(dataDirectory)).toBe(0o700);
    expect(paths.get(join(dataDirectory, 'secrets.json'))).toBe(0o600);
    // `stat` agrees (what an operator would run).
    expect(execFileSync('stat', ['-c', '%a', join(dataDirectory, 'pglite', 'PG_VERSION')], { encoding: 'utf8' }).trim()).toBe('600');
    expect(await second.process.stop()).toBe(0);
  }, 240_000);

  describe('on PostgreSQL, with a database outage so the spool exists', () => {
    let db: TestDatabase;
    let proxy: TcpProxy;
    beforeAll(async () => {
      db = await createTestDatabase();
      proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    });
    afterAll(async () => {
      await proxy.close();
      await db.drop();
    });

    it('generated secrets and the spool are private; a restart replays the spool and leaves nothing open', async () => {
      const dataDirectory = newcomerDirectory('tm-datadir-pg-');
      // No JwtKey nor ApiHmacKey: they are generated into DataDirectory.
      const env = { ConnectionString: proxy.url(db.url), DataDirectory: dataDirectory, Instance: 'datadir-pg' };
      const node = await start(env);
      const { token } = await signInAdministrator(node);
      await proxy.refuse();
      const logout = await new Browser(node.url).post('/api/Authentication/Logout', undefined, { authorization: `Bearer ${token}` });
      expect(logout.status).toBe(200);
      expect(logout.headers.has(LOGOUT_WARNING_HEADER)).toBe(true);
      const spool = spoolPath(dataDirectory, 'datadir-pg', 'UserLogout');
      await eventually(() => existsSync(spool) && readFileSync(spool, 'utf8').includes('Administrator'), 60_000);
      expect([...modes(dataDirectory).keys()]).toEqual(expect.arrayContaining([spool, join(dataDirectory, 'secrets.json')]));
      expect(openToOthers(dataDirectory)).toEqual([]);

      // Stopped during the outage: the spool stays for the next start.
      await node.process.stop();
      expect(existsSync(spool)).toBe(true);
      expect(openToOthers(dataDirectory)).toEqual([]);
      await proxy.restore();
      const again = await start(env);
      await again.process.waitFor(/1 UserLogout rows kept on disk by an earlier run/);
      // The logout of the outage (reason 1, a logout), written once from the spool.
      await eventually(async () => (await db.query(`SELECT 1 FROM "UserLogout" WHERE "CreatedUser" = 'Administrator' AND "ReasonId" = 1`)).length === 1);
      await eventually(() => !existsSync(spool));
      expect(modes(dataDirectory).size).toBeGreaterThanOrEqual(3);
      expect(openToOthers(dataDirectory)).toEqual([]);
      await again.process.stop();
    }, 240_000);
  });

  it('a DataDirectory that belongs to another user is refused with one line naming it and the fix', async () => {
    const dataDirectory = newcomerDirectory('tm-datadir-nobody-');
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
    chownSync(dataDirectory, nobody, nobody);
    // The tests run as root, who could open it anyway: the refusal is on the owner, not on access.
    const p = startServiceProcess({ DataDirectory: dataDirectory, Port: '0' });
    processes.push(p);
    expect(await p.exited()).toBe(78);
    expect(p.stdout()).toBe('');
    expect(p.stderr()).toBe(
      `Refusing to start: DataDirectory ${dataDirectory} belongs to user ${nobody}, not to the user this service runs as (${process.geteuid!()}): ` +
        `chown -R ${process.geteuid!()} ${dataDirectory}, or set DataDirectory to a directory of its own\n`,
    );
    // Nothing was written there, and its mode is as it was.
    expect(readdirSync(dataDirectory)).toEqual([]);
    expect(lstatSync(dataDirectory).mode & 0o777).toBe(0o755);
  }, 120_000);

  it.each([
    ['secrets.json', (directory: string) => join(directory, 'secrets.json')],
    ['the spool', (directory: string) => spoolPath(directory, 'datadir-link', 'UserLogout')],
  ])('a symbolic link planted as %s is not followed: the start refuses naming it, the target is untouched', async (_what, where) => {
    const dataDirectory = newcomerDirectory('tm-datadir-link-');
    const outside = join(mkdtempSync(join(tmpdir(), 'tm-outside-')), 'target');
    writeFileSync(outside, 'not the service\'s\n', { mode: 0o644 });
    chmodSync(outside, 0o644);
    const link = where(dataDirectory);
    mkdirSync(join(link, '..'), { recursive: true });
    symlinkSync(outside, link);
    const p = startServiceProcess({ DataDirectory: dataDirectory, Instance: 'datadir-link', Port: '0' });
    processes.push(p);
    expect(await p.exited()).toBe(78);
    expect(p.stderr()).toBe(
      `Refusing to start: DataDirectory ${dataDirectory} holds a symbolic link, ${link}; the service never writes or reads its files through a link: remove it\n`,
    );
    expect(readFileSync(outside, 'utf8')).toBe('not the service\'s\n');
    expect(lstatSync(outside).mode & 0o777).toBe(0o644);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
  }, 120_000);
});
