import type { Socket } from 'node:net';
import { ARCHIVER_STAGE_NAMES } from '../src/telemetry/telemetry.types';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { Browser } from './helpers/http';
import { RawRequest } from './helpers/raw-http';
import { referenceStatistics } from './helpers/reference-statistics';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const STRONG = 'Export-User-Passw0rd!';
const MINUTE = 60_000;
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180 parsing, written here so the export is checked by something other than the code that wrote it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}

/** The CSV cell a JSON member's value must become: text guarded against formulas, numbers as they are. */
const cellOf = (value: unknown) =>
  value === null ? '' : typeof value === 'string' ? (FORMULA_START.test(value) ? `'${value}` : value) : String(value);

/** Resolves when `condition` holds, polling; fails after `ms` (generous: the machine may be busy). */
async function eventually<T>(condition: () => Promise<T | false | null | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await condition();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('streamed reads and slow clients (issue 12, contract 13)', () => {
  let t: TestApp;
  let admin: Browser;
  let token: string;
  const bearer = () => ({ authorization: `Bearer ${token}` });
  const get = (path: string, headers: Record<string, string> = {}) => admin.get(path, { ...bearer(), ...headers });
  const opened: RawRequest[] = [];
  const raw = (path: string, headers: Record<string, string>) => {
    const request = new RawRequest(t.url, path, headers);
    opened.push(request);
    return request;
  };

  /** Backends of the service's database running a grid read's COPY. */
  const copies = () =>
    t.db.query<{ pid: number; wait_event: string | null }>(
      `SELECT pid, wait_event FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state = 'active' AND query LIKE 'COPY (%'`,
      [t.db.name],
    );

  /**
   * n ArchiverWarning rows over the last 50 minutes, with microseconds, NULLs, ties and text that needs
   * escaping. `padding`: characters added to every model name, to make an answer larger than every
   * buffer between PostgreSQL and the client (≈ 15 MB on loopback), so a reader that stops holds the
   * COPY itself back.
   */
  async function archiverWarnings(n: number, padding = 0): Promise<void> {
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                      "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT d - interval '3 seconds', md5((g % 5)::text)::uuid,
              CASE g % 4 WHEN 0 THEN 'Model "quoted" \\ back' WHEN 1 THEN E'line\\nbreak\\ttab é ✓' WHEN 2 THEN '=SUM(A1)' ELSE 'plain, comma' END || repeat('x', $3::int),
              CASE WHEN g % 2 = 0 THEN NULL ELSE md5(g::text)::uuid END,
              1 + g % 4, (g % 7) * 1000003 + 17, d, CASE WHEN g % 3 = 0 THEN NULL ELSE 'node-' || (g % 3) END
         FROM generate_series(1, $2::int) g, LATERAL (SELECT $1::timestamptz - g * (interval '50 minutes' / $2::int) - interval '0.000777 s' AS d) x`,
      [new Date(t.clock.nowMs()), n, padding],
    );
  }

  /** The service's side of every open connection, to see when its writes wait on a client. */
  const serverSockets = new Set<Socket>();
  /**
   * Resolves once at least n answers are held back by their clients: bytes queued on the service's
   * socket that do not move for 1.5 s. (The kernel keeps taking data for a while after a client stops
   * reading; on a busy machine that can take seconds.)
   */
  const heldBack = (n: number) =>
    eventually(async () => {
      const queued = [...serverSockets].filter((s) => s.writableLength > 0).map((s) => ({ s, length: s.writableLength }));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return queued.filter(({ s, length }) => !s.destroyed && s.writableLength === length).length >= n;
    }, 60_000);

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token } = await signInAdministrator(t));
    t.app.getHttpServer().on('connection', (socket: Socket) => {
      serverSockets.add(socket);
      socket.once('close', () => serverSockets.delete(socket));
    });
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    // UserLogin is append-only (contract 15); only the one test that fills it reads it.
    await t.db.query(`TRUNCATE "ArchiverWarning"`);
  });
  afterEach(() => opened.splice(0).forEach((r) => r.destroy()));

  it('streams the default answer (statistics and total first) equal to an independent computation, and exports the same rows', async () => {
    await archiverWarnings(5000);
    const res = await get('/api/ArchiverWarning');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.json)).toEqual(['statistics', 'total', 'rows']);
    expect(res.json.total).toBe(5000);
    expect(res.json.rows).toHaveLength(5000);

    // PostgreSQL's own formatting of the same rows, newest first.
    const expected = await t.db.query<Record<string, unknown>>(
      `SELECT "Id"::int AS id, to_char("OccurredDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "occurredDate",
              "EntityAnalysisModelGuid"::text AS "entityAnalysisModelGuid", "EntityAnalysisModelName" AS "entityAnalysisModelName",
              "EntityAnalysisModelInstanceEntryGuid"::text AS "entityAnalysisModelInstanceEntryGuid", "StageId"::int AS "stageId",
              NULL AS "stageName",
              "DurationMicroseconds"::float8 AS "durationMicroseconds",
              to_char("CreatedDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdDate", "Instance" AS instance
         FROM "ArchiverWarning" ORDER BY "CreatedDate" DESC, "Id" DESC`,
    );
    for (const row of expected) row.stageName = ARCHIVER_STAGE_NAMES[row.stageId as number];
    expect(res.json.rows).toEqual(expected);
    expect(res.json.rows[0].createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const e = referenceStatistics(expected.map((r) => r.durationMicroseconds as number));
    const s = res.json.statistics.durationMicroseconds;
    expect(s.min).toBe(e.min);
    expect(s.max).toBe(e.max);
    expect(s.mean).toBeCloseTo(e.mean, 6);
    expect(s.median).toBe(e.median);
    expect(s.standardDeviation).toBeCloseTo(e.sd, 6);
    expect(s.histogram.map((h: any) => h.frequency)).toEqual(e.frequencies);

    // Exports run in batches of 2000 by keyset: sorts with ties and NULLs across batch boundaries.
    for (const sort of [
      '',
      '&sortField=durationMicroseconds&sortDirection=asc',
      '&sortField=entityAnalysisModelInstanceEntryGuid&sortDirection=asc',
      '&sortField=entityAnalysisModelInstanceEntryGuid&sortDirection=desc',
      '&sortField=instance&sortDirection=asc',
      '&sortField=entityAnalysisModelName&sortDirection=desc',
    ]) {
      const json = sort ? await get(`/api/ArchiverWarning?take=100000${sort}`) : res;
      const csv = await get(`/api/ArchiverWarning?format=csv${sort}`);
      expect(csv.status).toBe(200);
      const [header, ...lines] = parseCsv(csv.text);
      expect(header).toEqual(Object.keys(json.json.rows[0]));
      expect(lines).toEqual(json.json.rows.map((row: any) => header.map((name) => cellOf(row[name]))));
      expect(new Set(lines.map((l) => l[0])).size).toBe(5000);
    }
  });

  it('counts the whole filtered window exactly on both sides of the 100000 newest rows the statistics read', async () => {
    const histogramSum = (json: any) => json.statistics.durationMicroseconds.histogram.reduce((a: number, b: any) => a + b.frequency, 0);
    const count = async (where = 'true') => Number((await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM "ArchiverWarning" WHERE ${where}`))[0].n);
    await archiverWarnings(99_999);
    const below = await get('/api/ArchiverWarning?take=10');
    expect(below.json.total).toBe(99_999);
    expect(histogramSum(below.json)).toBe(99_999);
    const belowStage = await get('/api/ArchiverWarning?take=10&stageId=2');
    expect(belowStage.json.total).toBe(await count('"StageId" = 2'));

    await archiverWarnings(2);
    const above = await get('/api/ArchiverWarning?take=10');
    expect(above.json.rows).toHaveLength(10);
    expect(above.json.total).toBe(100_001);
    expect(histogramSum(above.json)).toBe(100_000);
    const aboveStage = await get('/api/ArchiverWarning?take=10&stageId=2');
    expect(aboveStage.json.total).toBe(await count('"StageId" = 2'));
    expect(aboveStage.json.total).toBeGreaterThan(0);
  });

  it('takes gzip or br when offered, the same document either way', async () => {
    await archiverWarnings(3000);
    const plain = await get('/api/ArchiverWarning', { 'accept-encoding': 'identity' });
    expect(plain.headers.get('content-encoding')).toBeNull();
    for (const coding of ['gzip', 'br']) {
      const res = await get('/api/ArchiverWarning', { 'accept-encoding': `${coding}` });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBe(coding);
      expect(res.headers.get('vary')).toMatch(/Accept-Encoding/i);
      expect(res.json).toEqual(plain.json);
      const csv = await get('/api/ArchiverWarning?format=csv', { 'accept-encoding': coding });
      expect(csv.headers.get('content-encoding')).toBe(coding);
      expect(csv.text.split('\r\n')).toHaveLength(3002);
    }
    const refused = await get('/api/ArchiverWarning?take=1', { 'accept-encoding': 'gzip;q=0, br;q=0' });
    expect(refused.headers.get('content-encoding')).toBeNull();
  });

  it('cuts the answer off when the database fails after the first byte: the client never gets a shorter valid document', async () => {
    await archiverWarnings(100_000, 1000);
    const reader = raw('/api/ArchiverWarning', bearer());
    await reader.atLeast(1);
    reader.pause();
    // The service has sent the head and is now held back by the reader: its COPY waits to write.
    const [copy] = await eventually(async () => {
      const rows = await copies();
      return rows.length === 1 && rows[0].wait_event === 'ClientWrite' ? rows : null;
    });
    await t.db.query(`SELECT pg_terminate_backend($1)`, [copy.pid]);
    reader.resume();
    await reader.closedByServer();
    const { status, body, complete } = reader.response();
    expect(status).toBe(200);
    expect(complete).toBe(false);
    expect(body.toString('utf8', 0, 15)).toBe('{"statistics":{');
    expect(() => JSON.parse(body.toString('utf8'))).toThrow();
    // The next read is whole again.
    const again = await get('/api/ArchiverWarning?take=10');
    expect(again.status).toBe(200);
    expect(again.json.total).toBe(100_000);
  });

  it('ends a JSON reader that takes no data for 30 s and gives its database connection back', async () => {
    // ≈ 110 MB of rows: far more than the buffers can hide, so the COPY stays blocked on the reader.
    await archiverWarnings(100_000, 1000);
    const reader = raw('/api/ArchiverWarning', bearer());
    await reader.atLeast(1);
    reader.pause();
    await heldBack(1);
    expect((await copies()).map((c) => c.wait_event)).toEqual(['ClientWrite']);
    t.clock.advance(29 * 1000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await copies()).toHaveLength(1); // not yet: 29 s is within the limit
    t.clock.advance(2 * 1000);
    await eventually(async () => (await copies()).length === 0);
    reader.resume();
    await reader.closedByServer();
    expect(reader.response().complete).toBe(false);
  });

  it('holds 30 stalled exports without starving other requests: 2 per user, a quarter of the pool, 429 beyond, ended after 30 s idle', async () => {
    const agent = `Mozilla/5.0 (X11; Linux x86_64) ${'AppleWebKit/537.36 (KHTML, like Gecko) '.repeat(5)}`;
    await t.db.query(
      `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "LocalIp", "UserAgent")
       SELECT $1::timestamptz - g * interval '40 ms', 'user-' || g, 1, false, '10.0.0.9', '10.0.0.1', $2 FROM generate_series(1, 60000) g`,
      [new Date(t.clock.nowMs() - MINUTE), agent],
    );
    const users: string[] = [];
    for (let i = 0; i < 15; i++) {
      const name = `exporter-${i}`;
      await insertUser(t, { name, password: STRONG, landlord: true, permissions: [Permission.ReadWriteSecurityUser] });
      const browser = new Browser(t.url);
      const signIn = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
      expect(signIn.status).toBe(200);
      users.push(signIn.json.token as string);
    }
    const exportBy = async (userToken: string) => {
      const request = raw('/api/UserLogin?format=csv', { authorization: `Bearer ${userToken}` });
      await request.atLeast(12);
      request.pause();
      await eventually(async () => request.response().status !== 0);
      return request;
    };

    // The first user's two exports run and stall; a third of the same user is refused.
    const first = [await exportBy(users[0]), await exportBy(users[0])];
    expect(first.map((r) => r.response().status)).toEqual([200, 200]);
    const third = await exportBy(users[0]);
    third.resume();
    await third.closedByServer();
    expect(third.response().status).toBe(429);
    expect(Number(third.response().headers['retry-after'])).toBeGreaterThan(0);
    expect(third.response().headers['content-type']).toMatch(/application\/problem\+json/);

    // 28 more from 14 other users: a quarter of the pool (20 / 4 = 5) runs in all, the rest get 429.
    const others = await Promise.all(users.slice(1).flatMap((u) => [exportBy(u), exportBy(u)]));
    const stalled = [...first, ...others.filter((r) => r.response().status === 200)];
    const refused = others.filter((r) => r.response().status === 429);
    expect(stalled).toHaveLength(5);
    expect(refused).toHaveLength(25);
    refused.forEach((r) => r.destroy());
    // Stalled exports hold no database connection while they wait for their clients.
    await heldBack(5);
    expect(await copies()).toEqual([]);

    // Ordinary signed-in requests keep answering, each within 2 s.
    const timings = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const started = Date.now();
        const res = await get(i % 5 ? '/api/Authentication/Session' : '/api/UserLogout?take=100');
        return { status: res.status, ms: Date.now() - started, i };
      }),
    );
    expect(timings.map((x) => x.status)).toEqual(new Array(20).fill(200));
    expect(timings.filter((x) => x.ms >= 2000)).toEqual([]);

    // 30 s without the clients taking data ends the exports and frees their slots.
    t.clock.advance(31 * 1000);
    const fresh = await eventually(async () => {
      const res = await new Browser(t.url).get('/api/UserLogin?format=csv&take=5', { authorization: `Bearer ${users[0]}` });
      return res.status === 200 ? res : null;
    });
    expect(fresh.text.trim().split('\r\n')).toHaveLength(6);
    // The service has cut every stalled export: none of its sockets holds unsent data any more.
    await eventually(async () => ![...serverSockets].some((s) => s.writableLength > 0));
    for (const request of stalled) {
      request.resume();
      await request.closedByServer();
      expect(request.response().complete).toBe(false);
    }
  });
});

describe('a streamed answer when PostgreSQL goes silent (every wait has a deadline)', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    db = await createTestDatabase();
    proxy = await startTcpProxy(Number(new URL(db.url).port || 5432));
    t = await startTestApp({ db, env: { ConnectionString: proxy.url(db.url), DatabaseQueryTimeoutMilliseconds: '1500' } });
  });
  afterAll(async () => {
    await proxy.restore();
    await t.close();
    await proxy.close();
    await db.drop();
  });

  it('cuts the answer off when rows stop coming while the client reads on, and the service reads again once the network is back', async () => {
    const { token } = await signInAdministrator(t);
    await db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT d, md5(g::text)::uuid, 'Model ' || (g % 20), 1 + g % 4, g, d, 'node-a'
         FROM generate_series(1, 100000) g, LATERAL (SELECT $1::timestamptz - g * interval '30 ms' AS d) x`,
      [new Date(t.clock.nowMs())],
    );
    const reader = new RawRequest(t.url, '/api/ArchiverWarning', { authorization: `Bearer ${token}` });
    await reader.atLeast(1);
    proxy.blackhole();
    // The reader keeps reading: nothing holds the service back but the database's silence.
    await reader.closedByServer();
    const { status, body, complete } = reader.response();
    expect(status).toBe(200);
    expect(complete).toBe(false);
    expect(() => JSON.parse(body.toString('utf8'))).toThrow();
    await proxy.restore();
    const again = await eventually(async () => {
      const res = await fetch(`${t.url}/api/ArchiverWarning?take=5`, { headers: { authorization: `Bearer ${token}` } });
      return res.status === 200 ? ((await res.json()) as { total: number }) : null;
    });
    expect(again.total).toBe(100_000);
  });
});
