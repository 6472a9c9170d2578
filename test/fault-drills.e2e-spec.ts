import { AuditWriter } from '../src/sign-in-trail/audit.writer';
import { Bus } from '../src/bus/bus';
import { RedisBus } from '../src/bus/redis.bus';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { ManualClock } from '../src/common/clock';
import { createKey, sessionWithApiKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { openStream, OpenedStream } from './helpers/streams';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { insertUser, signInAdministrator } from './helpers/users';
import { eventually } from './helpers/eventually';

/**
 * Fault drills (issue 11): PostgreSQL or Redis refused or black-holed in the middle of a mixed load,
 * on one node and on two nodes sharing them (both nodes reach PostgreSQL and Redis through the same
 * TCP proxies, so a cut hits every node). During the cut every request answers within 5 s, never with
 * a 5xx other than 503; a credential that cannot be checked is refused with 503; logout answers 200.
 * After recovery, without restart, every answer is counted against the rows it promised: a UserLogin
 * row for every answered sign-in, a UserLogout row for every logout and RevokeTokens, one
 * CaptureQueueHealth row per queue per minute through the outage (minutes moved with the injected
 * clock), the cross-node messages of the outage delivered, and the log kept short.
 */
const REDIS = 'redis://127.0.0.1:6379';
const STRONG = 'Corr3ct-Horse-Battery';
const FIVE_SECONDS = 5_000;
/** Capture queues, hence CaptureQueueHealth rows per node per minute. */
const QUEUES = 6;

type Fault = 'pg-refuse' | 'pg-blackhole' | 'redis-refuse' | 'redis-blackhole';

interface Answer {
  kind: string;
  node: number;
  status: number;
  ms: number;
  user?: string;
  wave: number;
  headers?: Headers;
}

/** A stream the server must close: fails (instead of waiting for the test's timeout) if it stays open. */
const closedByServer = (stream: OpenedStream) => eventually(() => stream.isEnded());

const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

const LAYOUTS = [
  { name: 'one node', nodeCount: 1, allCut: true },
  { name: 'two nodes sharing PostgreSQL and Redis, both cut', nodeCount: 2, allCut: true },
  { name: 'two nodes sharing PostgreSQL and Redis, only the first cut', nodeCount: 2, allCut: false },
];

for (const [layoutIndex, { name: layout, nodeCount, allCut }] of LAYOUTS.entries()) {
  describe(`fault drills, ${layout}`, () => {
    let db: TestDatabase;
    let pg: TcpProxy;
    let redis: TcpProxy;
    const nodes: TestApp[] = [];
    const logs: CapturedLogs[] = [];
    const clock = new ManualClock(Date.now());
    let admin: { browser: Browser; token: string }[] = [];
    let drill = 0;

    beforeAll(async () => {
      db = await createTestDatabase();
      pg = await startTcpProxy(Number(new URL(db.url).port || 5432));
      redis = await startTcpProxy(6379);
      for (let i = 0; i < nodeCount; i++) {
        const cut = allCut || i === 0;
        const log = new CapturedLogs();
        logs.push(log);
        nodes.push(
          await startTestApp({
            db,
            clock,
            logger: log,
            env: {
              ConnectionString: cut ? pg.url(db.url) : db.url,
              RedisConnectionString: cut ? redis.url(REDIS) : REDIS,
              Instance: `drill-node-${i}`,
              // The throttle on, as by default: its count lives in Redis, and in the database while Redis cannot answer.
              SignInThrottle: '100/5n',
              // Streams re-check their session hourly here: a stream closing proves the bus message arrived.
              RevokedSessionCheckInterval: 'h',
              RevokedSessionCheckIntervalValue: '1',
            },
          }),
        );
      }
      await eventually(() => nodes.every((n) => n.app.get(Bus).connected));
      admin = [];
      for (const n of nodes) admin.push(await signInAdministrator(n));
    });
    afterAll(async () => {
      await pg.restore();
      await redis.restore();
      for (const n of nodes.reverse()) await n.close();
      for (const l of logs) l.close();
      await pg.close();
      await redis.close();
      await db.drop();
    });

    const ready = async (n: TestApp) => new Browser(n.url, {}).get('/health/ready');
    const opened: OpenedStream[] = [];
    afterEach(async () => {
      for (const s of opened.splice(0)) s.abort();
      await pg.restore();
      await redis.restore();
      for (const n of nodes) await eventually(async () => (await ready(n)).status === 200);
    });

    for (const fault of ['pg-refuse', 'pg-blackhole', 'redis-refuse', 'redis-blackhole'] as Fault[]) {
      it(`${fault}: a mixed load answers within 5 s, 503 at worst; after recovery every answer has its rows`, async () => {
        drill++;
        const tag = `d${layoutIndex}${drill}`;
        /** Whether node i reaches PostgreSQL and Redis through the proxies (else directly: it keeps working). */
        const isCut = (i: number) => allCut || i === 0;
        const cutNodes = nodes.filter((_, i) => isCut(i));
        const node = (i: number) => nodes[i % nodes.length];
        const part = fault.startsWith('pg') ? 'database' : 'redis';

        // --- Before the cut: users, sessions, keys and streams the load will use. ---
        const signInUsers: string[] = [];
        for (let i = 0; i < 4 * nodeCount; i++) {
          const name = `${tag}-signin-${i}`;
          await insertUser(node(0), { name, password: STRONG });
          signInUsers.push(name);
        }
        const wrongUser = `${tag}-wrong`;
        await insertUser(node(0), { name: wrongUser, password: STRONG });
        // A user signed in on node i, with a stream of that session open on the next node.
        const signedInWithStream = async (name: string, i: number) => {
          const { id } = await insertUser(node(0), { name, password: STRONG });
          const browser = new Browser(node(i).url);
          expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG })).status).toBe(200);
          const stream = await openStream(`${node(i + 1).url}/api/Watcher/Stream`, { cookie: cookieOf(browser) });
          opened.push(stream);
          expect(stream.status).toBe(200);
          await stream.waitFor((text) => text.length > 0);
          return { name, id, browser, stream };
        };
        // Sessions logged out during the cut (each with a stream open on the other node).
        const leaving: { name: string; id: number; browser: Browser; stream: OpenedStream; on: number }[] = [];
        for (let i = 0; i < 2 * nodeCount; i++) leaving.push({ ...(await signedInWithStream(`${tag}-leaving-${i}`, i)), on: i });
        // Users whose tokens an administrator revokes during the cut.
        const revoked: { name: string; id: number; cookie: string; stream: OpenedStream }[] = [];
        for (let i = 0; i < nodeCount; i++) {
          const { name, id, browser, stream } = await signedInWithStream(`${tag}-revoked-${i}`, i);
          revoked.push({ name, id, cookie: cookieOf(browser), stream });
        }
        const keyUser = await insertUser(node(0), { name: `${tag}-keyed`, password: STRONG });
        const keys: { id: number; apiKey: string }[] = [];
        for (let i = 0; i < 2 * nodeCount; i++) keys.push(await createKey(node(0), admin[0].browser, keyUser.id, { name: `${tag}-${i}` }));
        // A key nobody revokes, used by the load.
        const stayKey = await createKey(node(0), admin[0].browser, keyUser.id, { name: `${tag}-stays` });
        keys.push(stayKey);
        for (const n of nodes) for (const k of keys) await eventually(async () => (await sessionWithApiKey(n, k.apiKey)).status === 200);
        for (const n of nodes) await n.app.get(CaptureFlusher).flush();
        await db.query(`TRUNCATE "CaptureQueueHealth"`);
        for (const l of logs) l.flushRepeats();
        const logLinesBefore = logs.map((l) => l.lines.length);

        // --- The cut. ---
        const proxy = fault.startsWith('pg') ? pg : redis;
        if (fault.endsWith('refuse')) await proxy.refuse();
        else proxy.blackhole();

        const answers: Answer[] = [];
        let currentWave = 0;
        const time = async (kind: string, i: number, work: () => Promise<{ status: number; headers?: Headers }>, user?: string) => {
          const started = Date.now();
          const w = currentWave;
          const res = await work();
          answers.push({ kind, node: i % nodes.length, status: res.status, ms: Date.now() - started, user, wave: w, headers: res.headers });
          return res;
        };
        const streamsDuringCut: OpenedStream[] = [];
        const waveClock: number[] = [];
        const wave = async (w: number) => {
          waveClock.push(clock.nowMs());
          const work: Promise<unknown>[] = [];
          for (let i = 0; i < nodeCount; i++) {
            const n = node(i);
            for (let s = 0; s < 2; s++) {
              const name = signInUsers[(w * 2 + s) * nodeCount + i];
              work.push(time('signIn', i, () => new Browser(n.url).post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG }), name));
            }
            if (w === 0) {
              work.push(
                time('signInWrong', i, () => new Browser(n.url).post('/api/Authentication/ByUserNamePassword', { userName: wrongUser, password: 'not-it' }), wrongUser),
              );
            }
            work.push(time('bearer', i, () => new Browser(n.url, {}).get('/api/Authentication/Session', { authorization: `Bearer ${admin[i].token}` })));
            work.push(time('cookie', i, () => admin[i].browser.get('/api/Authentication/Session')));
            work.push(time('apiKey', i, () => sessionWithApiKey(n, stayKey.apiKey)));
            work.push(time('read', i, () => new Browser(n.url, {}).get('/api/CaptureQueueHealth', { authorization: `Bearer ${admin[i].token}` })));
            work.push(time('live', i, () => new Browser(n.url, {}).get('/health/live')));
            work.push(time('loginPage', i, () => new Browser(n.url).get('/Account/Login')));
            // A page behind the session: never a redirect to the sign-in page (that would drop the cookies) for an outage.
            work.push(time('page', i, () => new Browser(n.url).get('/', { cookie: cookieOf(admin[i].browser) })));
            work.push(time(w === 0 ? 'readyAtOnce' : 'ready', i, () => ready(n)));
            work.push(
              time('stream', i, async () => {
                const s = await openStream(`${n.url}/api/ServiceChange/Stream`, { authorization: `Bearer ${admin[i].token}` });
                streamsDuringCut.push(s);
                opened.push(s);
                return { status: s.status };
              }),
            );
            const leaver = leaving[w * nodeCount + i];
            work.push(time('logout', i, () => leaver.browser.post('/api/Authentication/Logout'), leaver.name));
            if (w === 0) {
              // A logout without a session: its row (OutcomeId 2) is once a minute per address across the nodes.
              work.push(time('anonymousLogout', i, () => new Browser(n.url).post('/api/Authentication/Logout')));
              const target = revoked[i];
              work.push(time('revokeTokens', i, () => admin[i].browser.post(`/api/UserRegistry/RevokeTokens/${target.id}`), target.name));
            }
            const key = keys[w * nodeCount + i];
            work.push(time('keyRevoke', i, () => admin[i].browser.delete(`/api/UserRegistry/${keyUser.id}/ApiKey/${key.id}`), String(key.id)));
            work.push(time('keyCreate', i, () => admin[i].browser.post(`/api/UserRegistry/${keyUser.id}/ApiKey`, { name: `${tag}-new-${w}-${i}` })));
          }
          await Promise.all(work);
        };

        // First wave at once (connections open before the cut, nothing known yet), ...
        await wave(0);
        // ... the health timeline through two minutes of the outage on every node, ...
        const minutes: number[] = [];
        for (let m = 0; m < 2; m++) {
          clock.advance(60_000);
          minutes.push(clock.nowMs());
          for (const n of nodes) {
            const started = Date.now();
            const report = await n.app.get(CaptureFlusher).flush();
            expect(Date.now() - started).toBeLessThan(FIVE_SECONDS);
            // Redis down is no reason for the database writes to fail.
            expect(report.ok).toBe(part === 'redis' || !isCut(nodes.indexOf(n)));
          }
        }
        // ... and a second wave once every node knows (readiness names the failing part).
        for (const n of cutNodes) await eventually(async () => (await ready(n)).status === 503);
        for (const n of cutNodes) expect((await ready(n)).json.failing).toEqual([part]);
        currentWave = 1;
        await wave(1);

        // Every request answered within 5 s, none with a 5xx other than 503.
        const slow = answers.filter((a) => a.ms >= FIVE_SECONDS);
        expect(slow).toEqual([]);
        expect(answers.filter((a) => a.status >= 500 && a.status !== 503)).toEqual([]);
        // Statuses of the cut nodes; the others answer as if nothing happened.
        const statuses = (kind: string) => [...new Set(answers.filter((a) => a.kind === kind && isCut(a.node)).map((a) => a.status))].sort();
        const healthy = (kind: string) => [...new Set(answers.filter((a) => a.kind === kind && !isCut(a.node)).map((a) => a.status))].sort();
        if (!allCut) {
          const expected: Record<string, number> = { signIn: 200, signInWrong: 401, bearer: 200, cookie: 200, apiKey: 200, read: 200, stream: 200,
            live: 200, anonymousLogout: 200, loginPage: 200, page: 200, readyAtOnce: 200, ready: 200, logout: 200, revokeTokens: 204, keyRevoke: 204, keyCreate: 201 };
          for (const [kind, status] of Object.entries(expected)) expect({ kind, statuses: healthy(kind) }).toEqual({ kind, statuses: [status] });
        }
        const allowed = (kind: string, ok: number[]) => {
          for (const s of statuses(kind)) expect({ kind, status: s, allowed: [...ok, 503].includes(s) }).toEqual({ kind, status: s, allowed: true });
        };
        expect(statuses('logout')).toEqual([200]);
        expect(statuses('anonymousLogout')).toEqual([200]);
        expect(statuses('live')).toEqual([200]);
        expect(statuses('loginPage')).toEqual([200]);
        // A valid credential is never refused as invalid because a dependency is down: 200 or 503.
        for (const kind of ['signIn', 'bearer', 'cookie', 'apiKey', 'read', 'stream', 'page']) allowed(kind, [200]);
        allowed('signInWrong', [401]);
        allowed('revokeTokens', [204]);
        allowed('keyRevoke', [204]);
        allowed('keyCreate', [201]);
        if (part === 'database') {
          // Nothing can be checked against the database: fail closed (sign-in and every credential refused 503).
          expect(statuses('signIn')).toEqual([503]);
          for (const kind of ['cookie', 'read', 'revokeTokens', 'keyRevoke', 'keyCreate']) expect({ kind, statuses: statuses(kind) }).toEqual({ kind, statuses: [503] });
        } else {
          // Redis down: the database still answers, so does everything but what Redis alone serves.
          for (const kind of ['bearer', 'cookie', 'apiKey', 'read']) expect({ kind, statuses: statuses(kind) }).toEqual({ kind, statuses: [200] });
          // The sign-in throttle counts in the database while Redis cannot: sign-in goes on as usual.
          expect(statuses('signIn')).toEqual([200]);
          expect(statuses('signInWrong')).toEqual([401]);
          expect(statuses('revokeTokens')).toEqual([204]);
          expect(statuses('keyRevoke')).toEqual([204]);
          expect(statuses('keyCreate')).toEqual([201]);
        }
        allowed('readyAtOnce', [200]);
        expect(statuses('ready')).toEqual([503]);

        // The log: no ERROR line per refused request or per logout; what repeats is written once and then
        // counted. What is left are the once-a-minute background jobs (the capture flush, the key reload).
        for (let i = 0; i < nodes.length; i++) {
          logs[i].flushRepeats();
          if (!isCut(i)) continue;
          const during = logs[i].lines.slice(logLinesBefore[i]);
          const errors = during.filter((line) => line.level === 'error').map((line) => `${line.context}: ${line.message}`);
          expect(errors.filter((line) => !/^(CaptureFlusher|ActiveApiKeys): /.test(line))).toEqual([]);
          // At most one a minute each, whatever the load (two minutes of outage here).
          for (const context of ['CaptureFlusher', 'ActiveApiKeys']) {
            expect(errors.filter((line) => line.startsWith(`${context}: `)).length).toBeLessThanOrEqual(minutes.length);
          }
          // Distinct warnings, each written once and then as one count, not a line per refused request: the
          // two waves send each node about 50 requests, most refused (the issue counted 463 lines in 75 s).
          expect(during.filter((line) => line.level === 'warn' || line.level === 'error').length).toBeLessThanOrEqual(40);
        }

        // --- Recovery, without restart. ---
        await proxy.restore();
        for (const n of nodes) await eventually(async () => (await ready(n)).status === 200);
        for (const n of nodes) await n.app.get(AuditWriter).writeKept();
        clock.advance(60_000);
        minutes.push(clock.nowMs());
        for (const n of nodes) expect((await n.app.get(CaptureFlusher).flush()).ok).toBe(true);
        for (const n of nodes) expect(n.app.get(AuditWriter).pending).toEqual({ kept: 0, dropped: 0 });
        for (const n of nodes) await eventually(() => (n.app.get(Bus) as RedisBus).pending.queued === 0);
        for (const n of nodes) expect((n.app.get(Bus) as RedisBus).pending.dropped).toBe(0);

        // UserLogin: exactly one success row per sign-in answered 200, a failure row per 401, none beyond.
        const logins = await db.query<{ CreatedUser: string; Failed: boolean; n: string }>(
          `SELECT "CreatedUser", "Failed", count(*) AS n FROM "UserLogin" WHERE "CreatedUser" LIKE $1 || '-signin-%' OR "CreatedUser" = $2
            GROUP BY 1, 2 ORDER BY 1, 2`,
          [tag, wrongUser],
        );
        const expectedLogins = new Map<string, { CreatedUser: string; Failed: boolean; n: string }>();
        for (const a of answers.filter((x) => x.kind === 'signIn' || x.kind === 'signInWrong')) {
          if (a.status === 503) continue;
          const failed = a.status !== 200;
          const key = `${a.user}/${failed}`;
          const row = expectedLogins.get(key) ?? { CreatedUser: a.user!, Failed: failed, n: '0' };
          row.n = String(Number(row.n) + 1);
          expectedLogins.set(key, row);
        }
        expect(logins).toEqual([...expectedLogins.values()].sort((x, y) => (x.CreatedUser < y.CreatedUser ? -1 : x.CreatedUser > y.CreatedUser ? 1 : Number(x.Failed) - Number(y.Failed))));

        // UserLogout: one row per logout answered (each a session: revoked, or kept as outcome 3 and written
        // now with the instant it happened), one per RevokeTokens answered 204, none for a 503.
        const logouts = await db.query<{ CreatedUser: string; ReasonId: number; OutcomeId: number; CreatedDate: Date }>(
          `SELECT "CreatedUser", "ReasonId", "OutcomeId", "CreatedDate" FROM "UserLogout" WHERE "CreatedUser" LIKE $1 || '-%' ORDER BY "CreatedUser"`,
          [tag],
        );
        const loggedOut = answers.filter((a) => a.kind === 'logout').map((a) => a.user!);
        const revokedOk = answers.filter((a) => a.kind === 'revokeTokens' && a.status === 204).map((a) => a.user!);
        expect(logouts.map((r) => r.CreatedUser).sort()).toEqual([...loggedOut, ...revokedOk].sort());
        // Each row with the instant it happened (the clock of its wave), even when written on recovery.
        const waveOf = new Map(answers.filter((a) => a.kind === 'logout' || a.kind === 'revokeTokens').map((a) => [a.user!, a.wave]));
        for (const row of logouts) {
          expect({ user: row.CreatedUser, at: row.CreatedDate.getTime() }).toEqual({ user: row.CreatedUser, at: waveClock[waveOf.get(row.CreatedUser)!] });
        }
        // Outcome 1 (revoked) wherever the database answered; 3 (the revocation could not be written) where it did not.
        const logoutNode = new Map(answers.filter((a) => a.kind === 'logout').map((a) => [a.user!, a.node]));
        for (const row of logouts.filter((r) => loggedOut.includes(r.CreatedUser))) {
          const outcome = part === 'database' && isCut(logoutNode.get(row.CreatedUser)!) ? 3 : 1;
          expect({ user: row.CreatedUser, reason: row.ReasonId, outcome: row.OutcomeId }).toEqual({ user: row.CreatedUser, reason: 1, outcome });
        }

        // The anonymous logouts: one row for the address in that minute, written late if the database was
        // down; one per node at most when the shared once-a-minute rule could not be reached (Redis down).
        const anonymous = await db.query<{ CreatedDate: Date }>(
          `SELECT "CreatedDate" FROM "UserLogout" WHERE "UserRegistryId" IS NULL AND "OutcomeId" = 2 AND "CreatedDate" >= $1`,
          [new Date(waveClock[0])],
        );
        expect(anonymous.map((r) => r.CreatedDate.getTime())).toEqual(anonymous.map(() => waveClock[0]));
        expect(anonymous.length).toBeGreaterThanOrEqual(1);
        // (Nodes reaching the database by different addresses, as here when only one is cut, count apart:
        // the deployment's namespace is derived from the connection string.)
        expect(anonymous.length).toBeLessThanOrEqual(part === 'redis' || !allCut ? nodes.length : 1);

        // CaptureQueueHealth: one row per queue per node per minute, the outage minutes included.
        const health = await db.query<{ Instance: string; CreatedDate: Date; n: string }>(
          `SELECT "Instance", "CreatedDate", count(*) AS n FROM "CaptureQueueHealth" GROUP BY 1, 2 ORDER BY 2, 1`,
        );
        expect(health).toEqual(
          minutes.flatMap((m) => nodes.map((_, i) => ({ Instance: `drill-node-${i}`, CreatedDate: new Date(m), n: String(QUEUES) }))),
        );

        // Cross-node: what happened during the cut reaches every node now, without restart. Every stream of an
        // ended session is closed (a revocation that could not be written closes its streams anyway), and
        // every revoked session is refused on every node.
        for (const l of leaving) {
          await closedByServer(l.stream);
          const revokedInDatabase = !(part === 'database' && isCut(logoutNode.get(l.name)!));
          if (!revokedInDatabase) continue;
          for (const n of nodes) expect((await new Browser(n.url).get('/api/Authentication/Session', { cookie: cookieOf(l.browser) })).status).toBe(401);
        }
        for (const r of revoked.filter((x) => revokedOk.includes(x.name))) {
          await closedByServer(r.stream);
          for (const n of nodes) expect((await new Browser(n.url).get('/api/Authentication/Session', { cookie: r.cookie })).status).toBe(401);
        }
        const keyAnswers = answers.filter((a) => a.kind === 'keyRevoke');
        for (const n of nodes) {
          for (const a of keyAnswers) {
            const key = keys.find((k) => String(k.id) === a.user)!;
            const expected = a.status === 204 ? 401 : 200;
            await eventually(async () => (await sessionWithApiKey(n, key.apiKey)).status === expected);
          }
        }
        for (const s of streamsDuringCut) s.abort();
        for (const l of leaving) l.stream.abort();
        for (const r of revoked) r.stream.abort();
      });
    }
  });
}
