import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { ADMIN_PASSWORD, signInAdministrator } from './helpers/users';

/**
 * PostgreSQL lost in the middle of a run (issue 11): the service talks to the database through a TCP
 * proxy of the test's own, which is cut both ways a network fails: refused (connections reset, new
 * ones refused) and black-holed (connections kept open, every byte dropped). The service runs with its
 * default deadlines. No request may wait more than 5 s; a credential that cannot be checked is refused
 * with 503 (never 500); the service recovers by itself when the database answers again.
 */
const FIVE_SECONDS = 5_000;

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await work();
  return { result, ms: Date.now() - started };
}

/** Polls `check` until it holds (a recovering service), failing after a deadline generous for a busy machine. */
async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('PostgreSQL refused or black-holed in the middle of a run', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let logs: CapturedLogs;

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    logs = new CapturedLogs();
    t = await startTestApp({ db, env: { ConnectionString: proxy.url(db.url) }, logger: logs });
  });
  afterAll(async () => {
    await proxy.restore();
    await t.close();
    logs.close();
    await proxy.close();
    await db.drop();
  });
  afterEach(async () => proxy.restore());

  const session = (token: string) => new Browser(t.url).get('/api/Authentication/Session', { authorization: `Bearer ${token}` });
  const signIn = () => new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'Administrator', password: ADMIN_PASSWORD });
  const recovered = (token: string) => eventually(async () => (await session(token)).status === 200);

  it('black-holed: a signed-in request, a sign-in and a logout each answer within 5 s (503, 503, 200), then it recovers alone', async () => {
    const { token } = await signInAdministrator(t);
    const { browser } = await signInAdministrator(t);
    expect((await session(token)).status).toBe(200);

    proxy.blackhole();
    const [read, login, logout] = await Promise.all([
      timed(() => session(token)),
      timed(() => signIn()),
      timed(() => browser.post('/api/Authentication/Logout')),
    ]);
    expect({ status: read.result.status, type: read.result.headers.get('content-type') }).toEqual({
      status: 503,
      type: expect.stringMatching(/^application\/problem\+json/),
    });
    expect(read.ms).toBeLessThan(FIVE_SECONDS);
    expect(login.result.status).toBe(503);
    expect(login.ms).toBeLessThan(FIVE_SECONDS);
    expect(logout.result.status).toBe(200);
    expect(logout.result.headers.get(LOGOUT_WARNING_HEADER)).toBe('revocation-failed');
    expect(logout.ms).toBeLessThan(FIVE_SECONDS);

    // Once the database is found unreachable, the next requests do not each wait out a deadline.
    const again = await timed(() => session(token));
    expect(again.result.status).toBe(503);
    expect(again.ms).toBeLessThan(FIVE_SECONDS);

    await proxy.restore();
    await recovered(token);
    expect((await signIn()).status).toBe(200);
  });

  it('black-holed while connections are busy and new ones are needed: still no request beyond 5 s', async () => {
    const { token } = await signInAdministrator(t);
    proxy.blackhole();
    // More requests than the pool has connections: some wait for a connection, some open new ones
    // into the black hole, some take connections that were open before it.
    const answers = await Promise.all(Array.from({ length: 30 }, () => timed(() => session(token))));
    expect(new Set(answers.map((a) => a.result.status))).toEqual(new Set([503]));
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(FIVE_SECONDS);
    await proxy.restore();
    await recovered(token);
  });

  it('refused: sign-in answers 503 (not 500), and repeated refusals are summarised instead of an ERROR line each', async () => {
    const { token } = await signInAdministrator(t);
    await proxy.refuse();
    logs.flushRepeats();
    const before = logs.lines.length;
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await timed(() => signIn()), await timed(() => session(token)));
    expect(new Set(answers.map((a) => a.result.status))).toEqual(new Set([503]));
    expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(FIVE_SECONDS);
    expect(answers[0].result.json).toMatchObject({ status: 503, title: 'Service Unavailable' });
    logs.flushRepeats();
    const during = logs.lines.slice(before);
    expect(during.filter((line) => line.level === 'error')).toEqual([]);
    // 40 refused requests: a handful of distinct warnings, each written once and then as one summary.
    expect(during.length).toBeLessThanOrEqual(10);
    expect(during.some((line) => /repeated \d+ more times?/.test(line.message))).toBe(true);

    await proxy.restore();
    await recovered(token);
    expect((await signIn()).status).toBe(200);
  });
});
