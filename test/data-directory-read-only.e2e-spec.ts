import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spoolPath } from '../src/common/json-lines-spool';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { TEST_API_HMAC_KEY, TEST_JWT_KEY } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { signInAdministrator } from './helpers/users';

/**
 * A read-only DataDirectory (issue 33), as an operator meets it: a volume mounted read-only, or one
 * the kernel turned read-only under a running service. The tests run as root, which no file mode
 * stops, so the directory is made read-only the way a real one is: a read-only bind mount, created
 * and removed here. A machine where the test cannot mount fails the test, saying so; it is never
 * skipped.
 *
 * - At start the directory is refused with one line naming it, embedded or not (the spool of an
 *   outage could not be kept: durability would be lost silently).
 * - Made read-only while the service runs: requests are still answered; a logout during a database
 *   outage answers 200 with its warning and keeps its row in memory; the spool that cannot be written
 *   says so in one ERROR line (not one per logout); the rows are written once the database answers.
 */

/** `directory` made read-only in place (a read-only bind mount of itself); `undo` makes it writable again. */
function makeReadOnly(directory: string): { undo(): void } {
  try {
    execFileSync('mount', ['--bind', directory, directory], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`this test needs to mount (run as root with CAP_SYS_ADMIN): mount --bind ${directory} failed: ${(error as { stderr?: Buffer }).stderr?.toString().trim() ?? String(error)}`);
  }
  try {
    execFileSync('mount', ['-o', 'remount,bind,ro', directory], { stdio: 'pipe' });
  } catch (error) {
    execFileSync('umount', [directory]);
    throw new Error(`this test needs a read-only bind mount: mount -o remount,bind,ro ${directory} failed: ${(error as { stderr?: Buffer }).stderr?.toString().trim() ?? String(error)}`);
  }
  let mounted = true;
  return {
    undo() {
      if (!mounted) return;
      // Lazily: a file the service still holds open must not keep the mount.
      execFileSync('umount', ['-l', directory]);
      mounted = false;
    },
  };
}

const linesOf = (p: ServiceProcess, pattern: RegExp) => (p.stdout() + p.stderr()).split('\n').filter((line) => pattern.test(line));

describe('a read-only DataDirectory', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  const processes: ServiceProcess[] = [];
  const mounts: { undo(): void }[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    for (const mount of mounts) mount.undo();
    await proxy?.close();
    await db?.drop();
  });

  const service = (env: Record<string, string>) => {
    const p = startServiceProcess({ Port: '0', BindAddress: '127.0.0.1', SignInThrottle: '0', ...env });
    processes.push(p);
    return p;
  };
  const readOnlyDirectory = () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'tm-ro-')), 'data');
    mkdirSync(directory, { mode: 0o700 });
    mounts.push(makeReadOnly(directory));
    return directory;
  };

  it('embedded default: the start is refused with one line naming the directory', async () => {
    const directory = readOnlyDirectory();
    const p = service({ DataDirectory: directory });
    expect(await p.exited()).not.toBe(0);
    const said = linesOf(p, new RegExp(`DataDirectory ${directory}`));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/not writable \(EROFS\)/);
  }, 120_000);

  it('on PostgreSQL: the start is refused with one line naming the directory (the outage spool could not be kept)', async () => {
    const directory = readOnlyDirectory();
    const p = service({ DataDirectory: directory, ConnectionString: db.url, JwtKey: TEST_JWT_KEY, ApiHmacKey: TEST_API_HMAC_KEY });
    expect(await p.exited()).not.toBe(0);
    const said = linesOf(p, new RegExp(`DataDirectory ${directory}`));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/not writable \(EROFS\)/);
  }, 120_000);

  it('made read-only while running: requests answered, one ERROR for the spool, logouts of an outage kept in memory and written once the database answers', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'tm-ro-')), 'data');
    const p = service({ DataDirectory: directory, Instance: 'ro-node', ConnectionString: proxy.url(db.url), JwtKey: TEST_JWT_KEY, ApiHmacKey: TEST_API_HMAC_KEY });
    const [, listening] = await p.waitFor(/listening on (\S+)/);
    const node = { url: listening.replace('localhost', '127.0.0.1') };
    const tokens: string[] = [];
    for (let i = 0; i < 3; i++) tokens.push((await signInAdministrator(node)).token);
    const [{ mark }] = await db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`);

    mounts.push(makeReadOnly(directory));
    await proxy.refuse();
    for (const token of tokens) {
      const res = await new Browser(node.url).post('/api/Authentication/Logout', undefined, { authorization: `Bearer ${token}` });
      // Answered as the contract says for an outage: 200, cookies cleared, the warning header.
      expect({ status: res.status, warning: res.headers.get(LOGOUT_WARNING_HEADER) }).toEqual({ status: 200, warning: 'revocation-failed' });
    }
    // Still answering (what needs no database), and nothing on the read-only disk.
    expect((await new Browser(node.url).get('/health/live')).status).toBe(200);
    expect(existsSync(spoolPath(directory, 'ro-node', 'UserLogout'))).toBe(false);
    // One ERROR names the spool that cannot be written and says the rows are in memory only.
    await eventually(() => linesOf(p, /ERROR/).some((line) => line.includes('ro-node.UserLogout.jsonl')), 30_000);
    const errors = linesOf(p, /ERROR/).filter((line) => line.includes('ro-node.UserLogout.jsonl'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/EROFS/);
    expect(errors[0]).toMatch(/memory only/);

    // The database answers again: every logout has its row, once.
    await proxy.restore();
    await eventually(async () => (await db.query(`SELECT 1 FROM "UserLogout" WHERE "Id" > $1`, [mark])).length >= tokens.length, 60_000, 250);
    const rows = await db.query<{ OutcomeId: number }>(`SELECT "OutcomeId" FROM "UserLogout" WHERE "Id" > $1`, [mark]);
    expect(rows.map((row) => row.OutcomeId)).toEqual(tokens.map(() => 3));
  }, 180_000);
});
