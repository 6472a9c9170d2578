import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { AuditWriter } from '../src/sign-in-trail/audit.writer';
import { createApp } from '../src/bootstrap';
import { spoolPath } from '../src/common/json-lines-spool';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { ADMIN_PASSWORD, firstAdministratorSignIn, signInAdministrator } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

/**
 * Issue 33: one logout, one UserLogout row, whatever the database did. A write whose answer never
 * came (its commit in doubt: the network lost between the COMMIT and its answer, a COMMIT waiting for
 * a synchronous standby past the deadline) may have committed; the row the service keeps and writes
 * again has the identity it was first given ((Id, CreatedDate), the primary key), so the later write
 * is skipped when the first one did commit. Reproduced deterministically: on PostgreSQL the test's
 * TCP proxy delivers the statement and drops its answer; on the embedded PGlite (one process, no
 * network) the kept copy of a committed row is replayed from the spool, as after a run killed before
 * it learnt the outcome of its write.
 */
interface Row {
  Id: string;
  OutcomeId: number;
  CreatedDate: Date;
}

describe('a UserLogout row whose write is in doubt is written once (PostgreSQL)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;
  let audit: AuditWriter;

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    // Through the proxy, with a 1 s deadline on every statement: an answer lost ends there.
    t = await startTestApp({ db, env: { ConnectionString: proxy.url(db.url), DatabaseQueryTimeoutMilliseconds: '1000' } });
    audit = t.app.get(AuditWriter);
  });
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await db?.drop();
  });

  /** The UserLogout rows written after `mark` (the table is append-only), and how many are queued or sealed in the audit log. */
  const rowsAfter = async (mark: string) => {
    const rows = await db.query<Row>(`SELECT "Id"::text AS "Id", "OutcomeId", "CreatedDate" FROM "UserLogout" WHERE "Id" > $1 ORDER BY "Id"`, [mark]);
    const sealed = await db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM "AuditPending" WHERE "TableName" = 'UserLogout' AND "RowId" = ANY($1::bigint[]))
             + (SELECT count(*) FROM "AuditLeaf" WHERE "TableName" = 'UserLogout' AND "RowId" = ANY($1::bigint[])))::int AS n`,
      [rows.map((row) => row.Id)],
    );
    return { rows, enqueued: sealed[0].n };
  };
  const markNow = async () => (await db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;
  /** Writes what the node keeps, as its retry job does, until nothing waits (the breaker lets one statement through a second). */
  const writeEverythingKept = () =>
    eventually(async () => {
      await audit.writeKept();
      return audit.pending.kept === 0;
    }, 60_000, 250);

  it('a revocation committed whose answer was lost: the logout answers with the warning, and the trail holds the revocation once', async () => {
    const { token } = await signInAdministrator(t);
    const mark = await markNow();
    // The revocation's transaction reaches PostgreSQL, COMMIT included; its answer does not come back.
    const lost = proxy.loseAnswersAfter(/INSERT INTO "UserLogout"[\s\S]*COMMIT/);
    const res = await new Browser(t.url).post('/api/Authentication/Logout', undefined, { authorization: `Bearer ${token}` });
    await lost;
    // The service could not know: it says the revocation may have failed, and records the failure as the same row.
    expect(res.status).toBe(200);
    expect(res.headers.get(LOGOUT_WARNING_HEADER)).toBe('revocation-failed');
    await writeEverythingKept();
    const { rows, enqueued } = await rowsAfter(mark);
    // One row: the revocation, which did commit (the token is revoked), not a second "could not be written".
    expect(rows.map((row) => row.OutcomeId)).toEqual([LogoutOutcomeId.Revoked]);
    expect(enqueued).toBe(1);
    expect((await new Browser(t.url).get('/api/Authentication/Session', { authorization: `Bearer ${token}` })).status).toBe(401);
  }, 120_000);

  it('a kept row written on recovery whose answer was lost: written again on the next try, one row', async () => {
    const { token } = await signInAdministrator(t);
    const mark = await markNow();
    await proxy.refuse();
    const res = await new Browser(t.url).post('/api/Authentication/Logout', undefined, { authorization: `Bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.headers.get(LOGOUT_WARNING_HEADER)).toBe('revocation-failed');
    expect(audit.pending.kept).toBe(1);
    // The first write of the kept row (armed before the database is back, so it is that one) reaches
    // PostgreSQL, autocommit; its answer does not come back.
    const lost = proxy.loseAnswersAfter(/INSERT INTO "UserLogout"/);
    await proxy.restore();
    let fired = false;
    void lost.then(() => (fired = true));
    await writeEverythingKept();
    expect(fired).toBe(true);
    const { rows, enqueued } = await rowsAfter(mark);
    expect(rows.map((row) => row.OutcomeId)).toEqual([LogoutOutcomeId.RevocationFailed]);
    expect(enqueued).toBe(1);
  }, 120_000);
});

describe('a kept UserLogout row already committed is written once (embedded PGlite)', () => {
  const boot = async (dataDirectory: string) => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error', Instance: 'in-doubt-node' }));
    const app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
  };

  it('the spool of a run killed after its write committed replays the row as a no-op; a line of an older build (no Id) is written once', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-in-doubt-'));
    const first = await boot(dataDirectory);
    let written: Row & { CreatedUser: string; SessionStartDate: Date };
    let before: number;
    try {
      const browser = new Browser(first.url);
      expect((await firstAdministratorSignIn(browser, ADMIN_PASSWORD)).status).toBe(200);
      expect((await browser.post('/api/Authentication/Logout')).status).toBe(200);
      const data = first.app.get(DataSource);
      [written] = await data.query(`SELECT "Id"::text AS "Id", "OutcomeId", "CreatedDate", "CreatedUser", "SessionStartDate" FROM "UserLogout" ORDER BY "Id" DESC LIMIT 1`);
      before = (await data.query(`SELECT count(*)::int AS n FROM "UserLogout"`))[0].n;
    } finally {
      await first.app.close();
    }
    // What the killed run had kept: the row it wrote (its answer lost), with its identity; and a row an
    // older build spooled without an Id.
    const olderBuild = new Date(written.CreatedDate.getTime() + 1_000);
    const line = (fields: Record<string, unknown>) =>
      JSON.stringify({
        createdUser: 'Administrator',
        userRegistryId: 1,
        tenantRegistryId: null,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.RevocationFailed,
        context: { remoteIp: '198.51.100.7', localIp: '127.0.0.1', userAgent: 'in-doubt' },
        sessionStartDate: written.SessionStartDate,
        message: 'kept',
        ...fields,
      });
    const spool = spoolPath(dataDirectory, 'in-doubt-node', 'UserLogout');
    mkdirSync(join(spool, '..'), { recursive: true });
    writeFileSync(spool, `${line({ id: written.Id, createdDate: written.CreatedDate })}\n${line({ createdDate: olderBuild })}\n`, { mode: 0o600 });
    expect(readFileSync(spool, 'utf8').trim().split('\n')).toHaveLength(2);

    const second = await boot(dataDirectory);
    try {
      await eventually(() => !existsSync(spool), 60_000);
      const data = second.app.get(DataSource);
      const same = await data.query(`SELECT "OutcomeId" FROM "UserLogout" WHERE "Id" = $1`, [written.Id]);
      expect(same).toEqual([{ OutcomeId: written.OutcomeId }]);
      const older = await data.query(`SELECT "OutcomeId", "UserAgent" FROM "UserLogout" WHERE "CreatedDate" = $1`, [olderBuild]);
      expect(older).toEqual([{ OutcomeId: LogoutOutcomeId.RevocationFailed, UserAgent: 'in-doubt' }]);
      expect((await data.query(`SELECT count(*)::int AS n FROM "UserLogout"`))[0].n).toBe(before! + 1);
      const enqueued = await data.query(
        `SELECT ((SELECT count(*) FROM "AuditPending" WHERE "TableName" = 'UserLogout' AND "RowId" = $1)
               + (SELECT count(*) FROM "AuditLeaf" WHERE "TableName" = 'UserLogout' AND "RowId" = $1))::int AS n`,
        [written.Id],
      );
      expect(enqueued[0].n).toBe(1);
    } finally {
      await second.app.close();
    }
  }, 180_000);
});
