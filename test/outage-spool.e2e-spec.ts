import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spoolPath } from '../src/common/json-lines-spool';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { PipelineTelemetry } from '../src/telemetry/pipeline-telemetry.service';
import { ArchiverStage } from '../src/telemetry/telemetry.types';
import { randomUUID } from 'node:crypto';
import { startTestApp, TEST_API_HMAC_KEY, TEST_JWT_KEY } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { signInAdministrator } from './helpers/users';
import { eventually } from './helpers/eventually';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

/**
 * What a database outage holds back survives the node (issue 11: "nothing lost", a crash in the middle
 * of an outage). UserLogout rows are on disk, in the node's spool under DataDirectory, before the
 * logout answers; CaptureQueueHealth minutes as soon as their flush fails. A node killed with SIGKILL
 * (or stopped) before the database answers again writes them when it starts, each with its own
 * instant, once each.
 */
/** Sessions logged out at once during the outage. */
const SESSIONS = 20;

interface LogoutRow {
  CreatedDate: Date;
  CreatedUser: string | null;
  OutcomeId: number;
  SessionStartDate: Date | null;
  TenantRegistryId: number | null;
  UserAgent: string | null;
}

describe('UserLogout rows kept during an outage, and the node killed before the database returns', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
  });
  afterAll(async () => {
    for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) await p.stop();
    await proxy.close();
    await db.drop();
  });

  /** UserLogout is append-only (contract 15): the rows written after the mark, instead of emptying the table. */
  let mark = '0';
  const rows = () =>
    db.query<LogoutRow>(
      `SELECT "CreatedDate", "CreatedUser", "OutcomeId", "SessionStartDate", "TenantRegistryId", "UserAgent" FROM "UserLogout" WHERE "Id" > $1 ORDER BY "CreatedDate"`,
      [mark],
    );

  it('kill -9 during a database outage: every logout answered 200 has its row once the node is back, dated when it happened', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-spool-'));
    const start = async () => {
      const p = startServiceProcess({
        ConnectionString: proxy.url(db.url),
        JwtKey: TEST_JWT_KEY,
        ApiHmacKey: TEST_API_HMAC_KEY,
        DataDirectory: dataDirectory,
        Instance: 'spool-node',
        Port: '0',
        BindAddress: '127.0.0.1',
        SignInThrottle: '0',
      });
      processes.push(p);
      const [, url] = await p.waitFor(/listening on (\S+)/);
      return { process: p, url: url.replace('localhost', '127.0.0.1') };
    };
    const node = await start();
    const tokens: string[] = [];
    for (let i = 0; i < SESSIONS; i++) tokens.push((await signInAdministrator(node)).token);
    mark = (await db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;

    // The database goes away. A burst of logouts, one per session, all at once: each answers 200 with
    // the warning, its row on disk first (written together, one flush for the burst).
    await proxy.refuse();
    const before = Date.now();
    // The first one with a hostile user agent: it reaches the disk bounded and stripped, as the table holds it.
    const agent = (i: number) => (i === 0 ? `spool-agent-0\t${'x'.repeat(2000)}` : `spool-agent-${i}`);
    const stored = (i: number) => (i === 0 ? `spool-agent-0${'x'.repeat(2000)}`.slice(0, 512) : agent(i));
    const answers = await Promise.all(
      tokens.map((token, i) => new Browser(node.url).post('/api/Authentication/Logout', undefined, { authorization: `Bearer ${token}`, 'user-agent': agent(i) })),
    );
    const after = Date.now();
    expect(answers.map((res) => ({ status: res.status, warned: res.headers.has(LOGOUT_WARNING_HEADER) }))).toEqual(
      tokens.map(() => ({ status: 200, warned: true })),
    );
    const spool = spoolPath(dataDirectory, 'spool-node', 'UserLogout');
    // (A disk slower than the spool's deadline would let an answer go first; the line follows.)
    await eventually(() => existsSync(spool) && readFileSync(spool, 'utf8').trim().split('\n').length === SESSIONS, 60_000);
    const spooled = readFileSync(spool, 'utf8');
    expect(spooled).not.toContain('\\t');
    expect(spooled).toContain(`"userAgent":"${stored(0)}"`);

    // Killed before the database answers again: what it kept in memory dies with it.
    node.process.child.kill('SIGKILL');
    await node.process.exited();
    await proxy.restore();
    expect(await rows()).toEqual([]);

    // Started again on the same DataDirectory: the rows are written, once each, with their own instants.
    const again = await start();
    await eventually(async () => (await rows()).length >= SESSIONS);
    await again.process.waitFor(new RegExp(`${SESSIONS} UserLogout rows kept on disk by an earlier run`));
    const written = await rows();
    expect(written.map((row) => row.UserAgent).sort()).toEqual(tokens.map((_, i) => stored(i)).sort());
    for (const row of written) {
      expect(row).toMatchObject({ CreatedUser: 'Administrator', OutcomeId: LogoutOutcomeId.RevocationFailed });
      expect(row.TenantRegistryId).not.toBeNull();
      expect(row.SessionStartDate).not.toBeNull();
      expect(row.CreatedDate.getTime()).toBeGreaterThanOrEqual(before);
      expect(row.CreatedDate.getTime()).toBeLessThanOrEqual(after);
    }
    await eventually(async () => !existsSync(spool));

    // A graceful stop with nothing waiting leaves no spool, and a later start writes nothing again.
    expect(await again.process.stop()).toBe(0);
    const third = await start();
    expect((await new Browser(third.url).get('/health/ready')).status).toBe(200);
    expect(await rows()).toHaveLength(SESSIONS);
  }, 180_000);

  it('a spool replayed at start writes a row the killed run had already written once, and skips a torn line', async () => {
    const logs = new CapturedLogs();
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-spool-'));
    // A database of its own, migrated by a first start (the row below must be there before the replay).
    const db = await createTestDatabase();
    await (await startTestApp({ db })).close();
    // The killed run wrote its first row, then died before its spool said so.
    const writtenAt = new Date(Date.UTC(2026, 10, 20, 8, 0, 0, 123));
    const waitingAt = new Date(Date.UTC(2026, 10, 20, 8, 0, 1, 456));
    await db.query(`INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "ReasonId", "OutcomeId") VALUES ($1, 'Administrator', 1, 3)`, [writtenAt]);
    const line = (createdDate: Date, userAgent: string) =>
      JSON.stringify({
        createdDate,
        createdUser: 'Administrator',
        userRegistryId: 1,
        tenantRegistryId: null,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.RevocationFailed,
        context: { remoteIp: '198.51.100.7', localIp: '127.0.0.1', userAgent },
        sessionStartDate: createdDate,
        message: 'kept',
      });
    const spool = spoolPath(dataDirectory, 'replay-node', 'UserLogout');
    mkdirSync(join(spool, '..'), { recursive: true });
    writeFileSync(spool, `${line(writtenAt, 'first')}\n${line(waitingAt, 'second')}\n{"createdDate":"2026-11-20T08:0`);

    const t = await startTestApp({ db, env: { DataDirectory: dataDirectory, Instance: 'replay-node' }, logger: logs });
    try {
      await eventually(async () => !existsSync(spool));
      const written = await db.query<LogoutRow>(`SELECT "CreatedDate", "UserAgent", "TenantRegistryId" FROM "UserLogout" ORDER BY "CreatedDate"`);
      expect(written.map((row) => [row.CreatedDate.toISOString(), row.UserAgent])).toEqual([
        [writtenAt.toISOString(), null],
        [waitingAt.toISOString(), 'second'],
      ]);
      // The tenant of a kept row is filled in from the user's role as it is written.
      expect(written[1].TenantRegistryId).not.toBeNull();
      expect(logs.count('error', /^1 lines of .* are not UserLogout rows/)).toBe(1);
    } finally {
      await t.close();
      logs.close();
      await db.drop();
    }
  });

  it('a spool that cannot be read does not stop the node, and is left as it is', async () => {
    const logs = new CapturedLogs();
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-spool-'));
    const spool = spoolPath(dataDirectory, 'odd-node', 'UserLogout');
    mkdirSync(join(spool, 'not-a-file'), { recursive: true });
    const t = await startTestApp({ db, env: { DataDirectory: dataDirectory, Instance: 'odd-node' }, logger: logs });
    try {
      expect((await new Browser(t.url).get('/health/ready')).status).toBe(200);
      expect(logs.count('error', /^cannot read the UserLogout rows kept in .*odd-node\.UserLogout\.jsonl/)).toBe(1);
      expect(existsSync(join(spool, 'not-a-file'))).toBe(true);
    } finally {
      await t.close();
      logs.close();
    }
  });
});

describe('CaptureQueueHealth minutes kept during an outage, and the node gone before the database returns', () => {
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

  it('each failed flush puts its minute on disk; the next start writes every minute once, a minute written before the crash not again', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-spool-'));
    const env = { DataDirectory: dataDirectory, Instance: 'health-node' };
    const first = await startTestApp({ db, env: { ...env, ConnectionString: proxy.url(db.url) } });
    const flusher = first.app.get(CaptureFlusher);
    const telemetry = first.app.get(PipelineTelemetry);
    await flusher.flush();
    await db.query(`TRUNCATE "CaptureQueueHealth"`);
    const spool = spoolPath(dataDirectory, 'health-node', 'CaptureQueueHealth');

    await proxy.refuse();
    const minutes: Date[] = [];
    for (let i = 0; i < 3; i++) {
      first.clock.advance(60_000);
      minutes.push(first.clock.now());
      telemetry.recordArchiverStage(randomUUID(), 'Card Fraud', ArchiverStage.RdbmsArchiveWrite, 20_000_000, randomUUID());
      expect((await flusher.flush()).ok).toBe(false);
      // On disk as soon as the flush failed: a kill now would not lose it.
      expect(readFileSync(spool, 'utf8').trim().split('\n')).toHaveLength(i + 1);
    }
    // Stopped during the outage, half a minute later: the stop's own flush fails and its minute is kept too.
    first.clock.advance(30_000);
    minutes.push(first.clock.now());
    await first.close();
    expect(readFileSync(spool, 'utf8').trim().split('\n')).toHaveLength(4);
    await proxy.restore();

    // The first minute had been written by a run that died before its spool said so.
    await db.query(
      `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance") SELECT q, 0, 0, $1, 'health-node' FROM generate_series(1, 6) q`,
      [minutes[0]],
    );
    const second = await startTestApp({ db, env });
    try {
      await eventually(() => !existsSync(spool));
      const rows = await db.query<{ CreatedDate: Date; QueueId: number; QueueDepth: number; Instance: string }>(
        `SELECT "CreatedDate", "QueueId", "QueueDepth", "Instance" FROM "CaptureQueueHealth" ORDER BY "CreatedDate", "QueueId"`,
      );
      // Six queues a minute, every minute once, each with its own instant and this node's name.
      expect(rows).toHaveLength(4 * 6);
      expect([...new Set(rows.map((r) => r.CreatedDate.getTime()))]).toEqual(minutes.map((m) => m.getTime()));
      expect(new Set(rows.map((r) => r.Instance))).toEqual(new Set(['health-node']));
      // The archiver queue (QueueId 3) grew through the outage: its depth as each minute saw it.
      expect(rows.filter((r) => r.QueueId === 3).map((r) => r.QueueDepth)).toEqual([0, 2, 3, 3]);
    } finally {
      await second.close();
    }
  });
});
