import * as argon2 from 'argon2';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'pg';
import { CommitNotConfirmedError, DatabaseBreaker, deadlineClient } from '../src/database/deadlines';
import { TEST_API_HMAC_KEY, TEST_JWT_KEY } from './helpers/app';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { PgPair, startPrimaryAndStandby } from './helpers/pg-cluster';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';

/**
 * PostgreSQL high availability, with real processes (issue 26): a primary and a synchronous streaming
 * standby started by the test, two service nodes reaching the primary through a TCP proxy that stands
 * in for the address that moves in a failover. Clients sign in and log out, spread over both nodes.
 *
 * 1. The standby stops for a while: every commit on the primary waits for it (synchronous commit),
 *    until the service's own deadline cancels the wait. Every request still answers within 10 s;
 *    what cannot be answered is a 503 with Retry-After, never a 500; every sign-in and logout
 *    answered has its row; once the standby is back the nodes serve again without a restart.
 * 2. The primary crashes (pg_ctl stop -m immediate); the standby is promoted (its own
 *    synchronous_standby_names cleared first, as an operator or Patroni does) and the address moves to
 *    it. Nothing answered is lost (every sign-in answered 200 has its row on the new primary, every
 *    logout answered its row), nothing answers 5xx but 503, and both nodes resume without a restart.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const TEN_SECONDS = 10_000;
const WORKERS = 6;

interface Answer {
  kind: 'signIn' | 'logout';
  node: number;
  user: string;
  status: number | 'no answer';
  retryAfter: string | null;
  ms: number;
  /** What was happening to the database when the request was sent. */
  phase: string;
}

describe('PostgreSQL high availability: a synchronous standby, two nodes, one moving address', () => {
  let pair: PgPair;
  let proxy: TcpProxy;
  let pool: Pool;
  const nodes: { process: ServiceProcess; url: string }[] = [];
  const users: string[] = [];
  let nextUser = 0;

  beforeAll(async () => {
    pair = await startPrimaryAndStandby();
    proxy = await startTcpProxy(pair.primary.port);
    const url = proxy.url(pair.primary.url);
    for (const instance of ['ha-a', 'ha-b']) {
      const p = startServiceProcess({
        ConnectionString: url,
        JwtKey: TEST_JWT_KEY,
        ApiHmacKey: TEST_API_HMAC_KEY,
        DataDirectory: mkdtempSync(join(tmpdir(), 'tm-ha-node-')),
        Port: '0',
        BindAddress: '127.0.0.1',
        SignInThrottle: '0',
        Instance: instance,
      });
      const [, listening] = await p.waitFor(/listening on (\S+)/);
      nodes.push({ process: p, url: listening.replace('localhost', '127.0.0.1') });
    }
    // The test's own view of the data, through the same moving address.
    pool = new Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined);
    const [role] = (
      await pool.query<{ Id: number }>(
        `INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") SELECT "Id", 'ha-role', true FROM "TenantRegistry" ORDER BY "Id" LIMIT 1 RETURNING "Id"`,
      )
    ).rows;
    // For the commit probe of drill 1 (created now: creating it then would wait for the standby too).
    await pool.query('CREATE TABLE ha_probe (n int)');
    const hash = await argon2.hash(STRONG, { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    // More users than the load needs: each is signed in once, so its rows tell what happened to it.
    users.push(...Array.from({ length: 3000 }, (_, i) => `ha-user-${i}`));
    await pool.query(
      `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate", "Active", "CreatedDate", "CreatedUser")
       SELECT $1, name, $2, now(), now() + interval '90 days', true, now(), 'test' FROM unnest($3::text[]) AS name`,
      [role.Id, hash, users],
    );
  }, 300_000);

  afterAll(async () => {
    for (const node of nodes) if (node.process.child.exitCode === null && node.process.child.signalCode === null) await node.process.stop();
    await pool?.end().catch(() => undefined);
    await proxy?.close();
    await pair?.destroy();
  }, 180_000);

  /** Signs users in and out on both nodes until `done()`; every answer is recorded with the phase it was sent in. */
  const load = (phase: () => string, done: () => boolean) => {
    const answers: Answer[] = [];
    const call = async (kind: Answer['kind'], node: number, user: string, work: () => Promise<Response | { status: number; headers: Headers }>) => {
      const sentIn = phase();
      const started = Date.now();
      let status: Answer['status'] = 'no answer';
      let retryAfter: string | null = null;
      try {
        const res = await work();
        status = res.status;
        retryAfter = res.headers.get('retry-after');
      } catch {
        // recorded as no answer
      }
      answers.push({ kind, node, user, status, retryAfter, ms: Date.now() - started, phase: sentIn });
      return status;
    };
    const worker = async () => {
      while (!done()) {
        if (nextUser >= users.length) throw new Error('the load ran out of users');
        const index = nextUser++;
        const user = users[index];
        const node = index % 2;
        const browser = new Browser(nodes[node].url);
        const signedIn = await call('signIn', node, user, () => browser.post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG }));
        if (signedIn !== 200) {
          // The next request a moment later, as a client told Retry-After would (not a busy loop).
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        await call('logout', node, user, () => browser.post('/api/Authentication/Logout'));
      }
    };
    return { answers, finished: Promise.all(Array.from({ length: WORKERS }, () => worker())) };
  };

  /**
   * Per user: success rows of UserLogin; UserLogout rows of the user's own logout (reason 1) that say
   * the session was revoked (outcome 1), and that say the revocation could not be written (outcome 3).
   */
  const rows = async () => {
    const count = async (sql: string) =>
      new Map((await pool.query<{ CreatedUser: string; n: string }>(sql)).rows.map((r) => [r.CreatedUser, Number(r.n)]));
    const logouts = (outcome: number) =>
      count(`SELECT "CreatedUser", count(*) AS n FROM "UserLogout" WHERE "ReasonId" = 1 AND "OutcomeId" = ${outcome} AND "CreatedUser" LIKE 'ha-user-%' GROUP BY 1`);
    return {
      logins: await count(`SELECT "CreatedUser", count(*) AS n FROM "UserLogin" WHERE NOT "Failed" AND "CreatedUser" LIKE 'ha-user-%' GROUP BY 1`),
      revoked: await logouts(1),
      failed: await logouts(3),
    };
  };

  /**
   * Every sign-in answered 200 has exactly its row, any other at most one. Every logout answered has
   * exactly one row, written at once or (kept, on disk) once the database takes it: the revocation's
   * row, or the row saying it could not be written. Never both, never twice: when a COMMIT was still
   * waiting for the standby as its deadline passed (an in-doubt commit: PostgreSQL may finish it
   * later), the row written again is the same row, (Id, CreatedDate), and skipped if the first
   * committed (issue 33, docs/decisions/0025-logout-identity.md).
   */
  const expectNothingAnsweredLost = async (answers: Answer[]) => {
    const answeredLogouts = answers.filter((x) => x.kind === 'logout' && x.status === 200);
    await eventually(async () => {
      const { revoked, failed } = await rows();
      return answeredLogouts.every((x) => (revoked.get(x.user) ?? 0) + (failed.get(x.user) ?? 0) >= 1);
    }, 60_000).catch(() => undefined); // the expectations below say which answer lacks its row
    const { logins, revoked, failed } = await rows();
    for (const x of answers) {
      if (x.kind === 'signIn') {
        const found = logins.get(x.user) ?? 0;
        if (x.status === 200) expect({ ...x, rows: found }).toEqual({ ...x, rows: 1 });
        else expect({ ...x, rows: found <= 1 }).toEqual({ ...x, rows: true });
      } else {
        const found = { revoked: revoked.get(x.user) ?? 0, failed: failed.get(x.user) ?? 0 };
        const recorded = found.revoked + found.failed === 1;
        expect({ ...x, ...found, recorded }).toEqual({ ...x, ...found, recorded: true });
      }
    }
  };

  /** Nothing hung, nothing answered 5xx but 503 (with Retry-After), and a logout always answers 200. */
  const expectOnly503s = (answers: Answer[]) => {
    expect(answers.filter((x) => x.status === 'no answer' || x.ms >= TEN_SECONDS)).toEqual([]);
    expect(answers.filter((x) => x.status !== 200 && (x.status !== 503 || x.retryAfter === null))).toEqual([]);
    expect(answers.filter((x) => x.kind === 'logout' && x.status !== 200)).toEqual([]);
  };

  /**
   * While the standby is away: a commit waiting for it, cancelled (as an operator would, or any cancel),
   * is reported by PostgreSQL as a success with a WARNING; the service's client makes it an error
   * (503), and the row is there, on the primary only.
   */
  const expectUnconfirmedCommitRefused = async () => {
    const DeadlineClient = deadlineClient(new DatabaseBreaker());
    const client = new DeadlineClient({ connectionString: proxy.url(pair.primary.url), query_timeout: 20_000 } as never);
    client.on('error', () => undefined);
    await client.connect();
    try {
      const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const insert = client.query('INSERT INTO ha_probe VALUES (1)');
      insert.catch(() => undefined);
      await eventually(async () => (await pool.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event = 'SyncRep'`, [pid])).rows.length === 1, 10_000, 20);
      await pool.query('SELECT pg_cancel_backend($1)', [pid]);
      await expect(insert).rejects.toThrow(CommitNotConfirmedError);
      expect((await pool.query('SELECT count(*)::int AS n FROM ha_probe')).rows[0].n).toBeGreaterThanOrEqual(1);
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  /** One sign-in of `user` on `node`, recorded like the load's. */
  const recordSignIn = async (answers: Answer[], node: number, user: string, phase: string) => {
    const started = Date.now();
    let status: Answer['status'] = 'no answer';
    let retryAfter: string | null = null;
    try {
      const res = await new Browser(nodes[node].url).post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG });
      status = res.status;
      retryAfter = res.headers.get('retry-after');
    } catch {
      // recorded as no answer
    }
    answers.push({ kind: 'signIn', node, user, status, retryAfter, ms: Date.now() - started, phase });
  };

  /** Both nodes sign a new user in (each may need a moment: the breaker probes once a second). */
  const expectBothNodesServe = async () => {
    for (const node of nodes) {
      await eventually(async () => {
        const user = users[nextUser++];
        return (await new Browser(node.url).post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG })).status === 200;
      }, 60_000, 500);
    }
  };

  it('a lock wait past the deadline and an operator\'s pg_cancel_backend answer 503 with Retry-After, never 500', async () => {
    const user = users[nextUser++];
    const lockHolder = await pool.connect();
    try {
      // Another transaction holds the user's row (an operator's UPDATE, a commit waiting for a standby).
      await lockHolder.query('BEGIN');
      await lockHolder.query(`SELECT 1 FROM "UserRegistry" WHERE "Name" = $1 FOR UPDATE`, [user]);
      // The sign-in's UPDATE of that row waits until the server's statement_timeout cancels it (57014).
      const timedOut = await new Browser(nodes[0].url).post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG });
      expect({ status: timedOut.status, retryAfter: timedOut.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
      expect(timedOut.json).toEqual({ type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'A service this request needs did not answer in time; try again shortly.' });

      // The same wait, cancelled by an operator before the deadline.
      const cancelled = new Browser(nodes[1].url).post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG });
      let pid: number | undefined;
      await eventually(async () => {
        const waiting = await pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UserRegistry%' AND pid <> pg_backend_pid()`,
        );
        pid = waiting.rows[0]?.pid;
        return pid !== undefined;
      }, 10_000, 20);
      expect((await pool.query<{ ok: boolean }>('SELECT pg_cancel_backend($1) AS ok', [pid])).rows[0].ok).toBe(true);
      const answer = await cancelled;
      expect({ status: answer.status, retryAfter: answer.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '5' });
    } finally {
      await lockHolder.query('ROLLBACK');
      lockHolder.release();
    }
    // Neither was a fault of the request: no stack in the log, one summarised warning each.
    for (const node of nodes) {
      const output = node.process.stdout() + node.process.stderr();
      expect(output).not.toMatch(/QueryFailedError|Internal Server Error|ERROR\s+\[Problem\]/);
      expect(output).toMatch(/WARN\s+\[Problem\]\s+answered 503, a dependency did not answer in time: canceling statement due to (statement timeout|user request)/);
    }
    // Nothing was held against the user: the next sign-in succeeds.
    expect((await new Browser(nodes[0].url).post('/api/Authentication/ByUserNamePassword', { userName: user, password: STRONG })).status).toBe(200);
  }, 120_000);

  it('drill 1: the synchronous standby stops under load: answers within 10 s, 503 not 500 while commits wait, every answer recorded, recovery without restart', async () => {
    let phase = 'healthy';
    let stop = false;
    const { answers, finished } = load(() => phase, () => stop);
    await eventually(() => answers.filter((x) => x.status === 200).length >= 10, 60_000, 50);
    await pair.standby.stop('fast');
    phase = 'standby stopped';
    const stoppedAt = Date.now();
    // Held longer than every deadline of the service (statement 2.5 s, query 3 s, connect 5 s). Meanwhile
    // a person signs in on both nodes at once (a second tab): one sign-in's commit waits for the standby
    // holding the user's row, the other waits for that row until its statement is cancelled (57014).
    try {
      await expectUnconfirmedCommitRefused();
      const twice: Promise<unknown>[] = [];
      while (Date.now() - stoppedAt < 7_000) {
        const user = users[nextUser++];
        twice.push(...[0, 1].map((node) => recordSignIn(answers, node, user, 'standby stopped')));
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
      await Promise.all(twice);
    } finally {
      // Back whatever happened, so the next drill starts from a healthy pair.
      await pair.standby.start();
    }
    phase = 'standby back';
    // Until both nodes have committed again with the standby confirming.
    await eventually(() => [0, 1].every((node) => answers.some((x) => x.phase === 'standby back' && x.node === node && x.kind === 'signIn' && x.status === 200)), 60_000, 100);
    stop = true;
    await finished;

    expectOnly503s(answers);
    // The stall was real: commits waited, and were answered 503 rather than reported as successes.
    const stalled = answers.filter((x) => x.phase === 'standby stopped' && x.kind === 'signIn');
    expect(stalled.length).toBeGreaterThan(0);
    expect(stalled.filter((x) => x.status === 503).length).toBeGreaterThan(0);
    await expectNothingAnsweredLost(answers);
    await expectBothNodesServe();
    // One summarised warning, never an ERROR with a stack, for what the stall refused.
    for (const node of nodes) expect(node.process.stdout() + node.process.stderr()).not.toMatch(/ERROR\s+\[Problem\]|QueryFailedError/);
  }, 240_000);

  it('drill 2: the primary crashes, the standby is promoted and the address moves: nothing answered lost, no 5xx but 503, both nodes resume', async () => {
    // A session signed in before the crash, used after it.
    const survivor = new Browser(nodes[0].url);
    expect((await survivor.post('/api/Authentication/ByUserNamePassword', { userName: users[nextUser++], password: STRONG })).status).toBe(200);

    let phase = 'healthy';
    let stop = false;
    const { answers, finished } = load(() => phase, () => stop);
    await eventually(() => answers.filter((x) => x.status === 200).length >= 10, 60_000, 50);
    await pair.primary.stop('immediate');
    phase = 'primary crashed';
    // The operator's failover: the standby must not wait for a standby of its own, then it is promoted.
    await pair.standby.configure({ synchronous_standby_names: '' });
    await pair.standby.promote();
    proxy.retarget(pair.standby.port);
    phase = 'promoted';
    await eventually(() => [0, 1].every((node) => answers.some((x) => x.phase === 'promoted' && x.node === node && x.kind === 'signIn' && x.status === 200)), 60_000, 100);
    stop = true;
    await finished;

    expectOnly503s(answers);
    expect(answers.filter((x) => x.phase === 'healthy' && x.status === 200).length).toBeGreaterThanOrEqual(10);
    await expectNothingAnsweredLost(answers);
    await expectBothNodesServe();
    const cookie = [...survivor.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    for (const node of nodes) expect((await new Browser(node.url).get('/api/Authentication/Session', { cookie })).status).toBe(200);
    // The new primary is the standby, no longer in recovery.
    expect((await pool.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery')).rows[0].recovery).toBe(false);
  }, 240_000);
});
