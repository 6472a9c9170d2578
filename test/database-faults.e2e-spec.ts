import { AUDIT_RETRY_CAPACITY, AuditWriter } from '../src/sign-in-trail/audit.writer';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { PipelineTelemetry } from '../src/telemetry/pipeline-telemetry.service';
import { ArchiverStage } from '../src/telemetry/telemetry.types';
import { spoolPath } from '../src/common/json-lines-spool';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { ADMIN_PASSWORD, signInAdministrator } from './helpers/users';
import { eventually } from './helpers/eventually';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

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

  /** UserLogout is append-only (contract 15): a test reads the rows written after its mark instead of emptying it. */
  let logoutMark = '0';
  const markLogouts = async () => {
    logoutMark = (await db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;
  };
  const logoutRows = () =>
    db.query<Record<string, unknown>>(
      `SELECT "CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "SessionStartDate", "Message"
         FROM "UserLogout" WHERE "Id" > $1 ORDER BY "Id"`,
      [logoutMark],
    );

  it('black-holed: a signed-in request, a sign-in and a logout each answer within 5 s (503, 503, 200), then it recovers alone and writes the logout row with its own instant', async () => {
    const { token } = await signInAdministrator(t);
    const { browser } = await signInAdministrator(t);
    const sessionStart = t.clock.now();
    expect((await session(token)).status).toBe(200);
    await markLogouts();
    t.clock.advance(60_000);
    const loggedOutAt = t.clock.now();

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

    // The logout happened: its row (OutcomeId 3, the revocation could not be written) waits in memory.
    expect(t.app.get(AuditWriter).pending).toEqual({ kept: 1, dropped: 0 });
    t.clock.advance(10 * 60_000);
    await proxy.restore();
    await recovered(token);
    await eventually(async () => (await logoutRows()).length === 1);
    expect(await logoutRows()).toEqual([
      {
        CreatedDate: loggedOutAt,
        CreatedUser: 'Administrator',
        UserRegistryId: 1,
        // Unknown when it happened (the user row could not be read), taken from the user's role when written.
        TenantRegistryId: 1,
        ReasonId: LogoutReasonId.UserLogout,
        OutcomeId: LogoutOutcomeId.RevocationFailed,
        SessionStartDate: sessionStart,
        Message: 'The revocation could not be written; the token stays valid until it expires.',
      },
    ]);
    expect(t.app.get(AuditWriter).pending).toEqual({ kept: 0, dropped: 0 });
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

  it('refused: an anonymous logout answers 200 at once and its row is written on recovery, dated when it happened', async () => {
    const { token } = await signInAdministrator(t);
    await markLogouts();
    t.clock.advance(120_000);
    const at = t.clock.now();
    await proxy.refuse();
    const logout = await timed(() => new Browser(t.url).post('/api/Authentication/Logout'));
    expect(logout.result.status).toBe(200);
    expect(logout.ms).toBeLessThan(FIVE_SECONDS);
    t.clock.advance(30_000);
    await proxy.restore();
    await recovered(token);
    await eventually(async () => (await logoutRows()).length === 1);
    expect(await logoutRows()).toEqual([
      expect.objectContaining({ CreatedDate: at, CreatedUser: null, UserRegistryId: null, TenantRegistryId: null, ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.NoSession }),
    ]);
  });

  it('keeps one CaptureQueueHealth row per queue per minute through an outage: each minute written on recovery with its own CreatedDate', async () => {
    const flusher = t.app.get(CaptureFlusher);
    const telemetry = t.app.get(PipelineTelemetry);
    await signInAdministrator(t);
    await flusher.flush();
    await db.query(`TRUNCATE "CaptureQueueHealth", "ArchiverWarning"`);
    const model = randomUUID();
    const slow = () => telemetry.recordArchiverStage(model, 'Card Fraud', ArchiverStage.RdbmsArchiveWrite, 20_000_000, randomUUID());
    const minutes: Date[] = [];
    const minute = async (fault: () => Promise<void> | void, work: () => void) => {
      t.clock.advance(60_000);
      minutes.push(t.clock.now());
      work();
      await fault();
      const report = await timed(() => flusher.flush());
      expect(report.result.ok).toBe(false);
      expect(report.ms).toBeLessThan(FIVE_SECONDS);
    };
    await minute(() => proxy.refuse(), slow);
    // A malformed entry in the second minute: dropped at once and counted in that minute's row.
    await minute(() => undefined, () => {
      slow();
      telemetry.recordArchiverStage('no-guid', 'Card Fraud', ArchiverStage.RdbmsArchiveWrite, 20_000_000, null);
    });
    await minute(async () => {
      await proxy.restore();
      proxy.blackhole();
    }, slow);
    // The three minutes wait on this node's disk, one line each, until the database takes them.
    const healthSpool = spoolPath(t.settings.dataDirectory, t.settings.instance, 'CaptureQueueHealth');
    expect(readFileSync(healthSpool, 'utf8').trim().split('\n')).toHaveLength(3);
    expect(await db.query(`SELECT * FROM "CaptureQueueHealth"`)).toEqual([]);

    await proxy.restore();
    await eventually(async () => (await signIn()).status === 200);
    t.clock.advance(60_000);
    minutes.push(t.clock.now());
    const recovered = await flusher.flush();
    expect(recovered.ok).toBe(true);
    expect(existsSync(healthSpool)).toBe(false);

    const rows = await db.query<{ QueueId: number; QueueDepth: number; DroppedCount: string; CreatedDate: Date }>(
      `SELECT "QueueId", "QueueDepth", "DroppedCount", "CreatedDate" FROM "CaptureQueueHealth" ORDER BY "CreatedDate", "QueueId"`,
    );
    expect(rows).toHaveLength(4 * 6);
    expect([...new Set(rows.map((r) => r.CreatedDate.getTime()))]).toEqual(minutes.map((m) => m.getTime()));
    // The archiver queue grew through the outage (nothing could be written) and every drop was reported once, in its minute.
    expect(rows.filter((r) => r.QueueId === 3).map((r) => [r.QueueDepth, Number(r.DroppedCount)])).toEqual([
      [1, 0],
      [2, 1],
      [3, 0],
      [3, 0],
    ]);
    expect(await db.query(`SELECT 1 FROM "ArchiverWarning"`)).toHaveLength(3);
  });

  it('refused for long: the queue of rows waiting is bounded, what it drops is counted and logged, the rest is written in order', async () => {
    const audit = t.app.get(AuditWriter);
    await markLogouts();
    await proxy.refuse();
    const start = t.clock.nowMs();
    for (let i = 0; i <= AUDIT_RETRY_CAPACITY; i++) {
      t.clock.set(start + i * 1000);
      await audit.logoutEventually({
        createdUser: `user-${i}`,
        userRegistryId: null,
        tenantRegistryId: null,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.RevocationFailed,
        context: null,
        sessionStartDate: null,
      });
    }
    expect(audit.pending).toEqual({ kept: AUDIT_RETRY_CAPACITY, dropped: 1 });
    logs.flushRepeats();
    expect(logs.count('error', /queue of UserLogout rows waiting for the database is full/)).toBe(1);

    await proxy.restore();
    await eventually(async () => (await signIn()).status === 200);
    await audit.writeKept();
    expect(audit.pending).toEqual({ kept: 0, dropped: 1 });
    const rows = await db.query<{ CreatedUser: string; CreatedDate: Date }>(`SELECT "CreatedUser", "CreatedDate" FROM "UserLogout" WHERE "Id" > $1 ORDER BY "Id"`, [logoutMark]);
    expect(rows).toHaveLength(AUDIT_RETRY_CAPACITY);
    expect(rows[0]).toEqual({ CreatedUser: 'user-0', CreatedDate: new Date(start) });
    expect(rows[AUDIT_RETRY_CAPACITY - 1]).toEqual({
      CreatedUser: `user-${AUDIT_RETRY_CAPACITY - 1}`,
      CreatedDate: new Date(start + (AUDIT_RETRY_CAPACITY - 1) * 1000),
    });
  });
});
