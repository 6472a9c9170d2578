import { ManualClock } from '../src/common/clock';
import { startTestApp, TestApp } from './helpers/app';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { sendRaw as send } from './helpers/raw-http';
import { createTestDatabase, TestDatabase } from './helpers/database';

/**
 * Contract 13, proxies, attacked: X-Forwarded-For headers a client forges (several header lines,
 * spaces, garbage, ports, very long values, IPv6 and IPv4-mapped forms) under each TrustProxy form.
 * The address written to UserLogin / UserLogout is always the right-most entry that is not a trusted
 * proxy, as an address; when that entry is none (garbage, too long), the trusted hop that forwarded it
 * stands for it, never a client-written left part. The per-address rules (sign-in throttle, one
 * anonymous logout row per minute) count that same address, so neither ports nor garbage nor a second
 * node buys an attacker another row or another attempt. The test app's peer is always 127.0.0.1.
 */
const SIGN_IN = '/api/Authentication/ByUserNamePassword';
const LOGOUT = '/api/Authentication/Logout';


async function signInAddress(t: TestApp, forwardedFor: string | string[] | null): Promise<{ status: number; remoteIp: string | undefined }> {
  const userName = `probe-${Math.random().toString(36).slice(2)}`;
  const headers: Record<string, string | string[]> = forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor };
  const res = await send(t.url, 'POST', SIGN_IN, headers, { userName, password: 'x' });
  const [row] = await t.db.query<{ RemoteIp: string }>(`SELECT "RemoteIp" FROM "UserLogin" WHERE "CreatedUser" = $1`, [userName]);
  return { status: res.status, remoteIp: row?.RemoteIp };
}

const LONG = `${'9'.repeat(40)}.${'8'.repeat(40)}`;

describe.each([
  {
    form: 'True (one hop)',
    env: { TrustProxy: 'True' },
    cases: [
      // [X-Forwarded-For (an array: several header lines), recorded address]
      [['6.6.6.6', '203.0.113.7'], '203.0.113.7'],
      ['6.6.6.6,203.0.113.7', '203.0.113.7'],
      ['  6.6.6.6 ,   203.0.113.7  ', '203.0.113.7'],
      ['6.6.6.6, 203.0.113.7:4711', '203.0.113.7'],
      ['6.6.6.6, [2001:DB8::7]:443', '2001:db8::7'],
      ['6.6.6.6, 2001:DB8::7', '2001:db8::7'],
      ['6.6.6.6, ::ffff:203.0.113.7', '203.0.113.7'],
      ['6.6.6.6, not-an-address', '127.0.0.1'],
      ['6.6.6.6, <script>', '127.0.0.1'],
      [`6.6.6.6, ${LONG}`, '127.0.0.1'],
      [`6.6.6.6, ${'a'.repeat(8000)}`, '127.0.0.1'],
      [`${'1.2.3.4, '.repeat(800)}203.0.113.7`, '203.0.113.7'],
    ],
  },
  {
    form: 'a hop count (2)',
    env: { TrustProxy: '2' },
    cases: [
      ['6.6.6.6, 198.51.100.66, 203.0.113.7', '198.51.100.66'],
      [['6.6.6.6', '198.51.100.66, 203.0.113.7'], '198.51.100.66'],
      ['6.6.6.6, garbage, 203.0.113.7', '203.0.113.7'],
      ['6.6.6.6, 198.51.100.66:1, 203.0.113.7', '198.51.100.66'],
    ],
  },
  {
    form: 'a list with IPv6 ranges and an IPv4-mapped peer',
    env: { TrustProxy: '::ffff:127.0.0.1, 2001:db8::/32' },
    cases: [
      ['6.6.6.6, 198.51.100.66, 2001:db8:1::5, 2001:db8::1', '198.51.100.66'],
      ['6.6.6.6, 2001:db9::5', '2001:db9::5'],
      ['6.6.6.6, 2001:db8::1, junk', '127.0.0.1'],
      [null, '127.0.0.1'],
    ],
  },
  {
    form: 'an IPv4-mapped range',
    env: { TrustProxy: '::ffff:127.0.0.0/104' },
    cases: [['6.6.6.6, 198.51.100.66', '198.51.100.66']],
  },
  {
    form: 'a list that holds only ::1 (not the IPv4 peer)',
    env: { TrustProxy: '::1' },
    cases: [['6.6.6.6, 198.51.100.66', '127.0.0.1']],
  },
  {
    form: 'False',
    env: { TrustProxy: 'False' },
    cases: [
      ['203.0.113.7', '127.0.0.1'],
      [['203.0.113.7', '198.51.100.66'], '127.0.0.1'],
    ],
  },
])('forged X-Forwarded-For under TrustProxy $form (contract 13)', ({ env, cases }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env });
  });
  afterAll(async () => t.close());

  const labelled = (cases as Array<[string | string[] | null, string]>).map(([xff, expected]) => {
    const text = JSON.stringify(xff);
    return [text.length > 60 ? `${text.slice(0, 40)}… (${text.length} characters)` : text, expected, xff] as const;
  });
  it.each(labelled)('%s is recorded as %s, never a 5xx', async (_label, expected, forwardedFor) => {
    const { status, remoteIp } = await signInAddress(t, forwardedFor);
    expect(status).toBe(401);
    expect(remoteIp).toBe(expected);
  });
});

describe('per-address rules count the address, not what a client writes around it (TrustProxy True)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { TrustProxy: 'True', SignInThrottle: '3/5n' } });
  });
  afterAll(async () => t.close());

  it('the sign-in throttle is not escaped by garbage, long or port-varied entries, and never answers 5xx', async () => {
    const forged = [`6.6.6.6, ${'x'.repeat(100)}`, '6.6.6.6, 203.0.113.9:1', '203.0.113.9:2', `${'y'.repeat(70)}`, '[::ffff:203.0.113.9]:3', '::FFFF:203.0.113.9'];
    const statuses: number[] = [];
    for (const xff of forged) statuses.push((await send(t.url, 'POST', SIGN_IN, { 'x-forwarded-for': xff }, { userName: 'nobody', password: 'x' })).status);
    // Garbage stands for the peer (127.0.0.1): two failures there; the other forms all name 203.0.113.9.
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    const rows = await t.db.query<{ RemoteIp: string; FailureTypeId: number }>(`SELECT "RemoteIp", "FailureTypeId" FROM "UserLogin" ORDER BY "Id"`);
    expect(rows.map((r) => `${r.RemoteIp}/${r.FailureTypeId}`)).toEqual([
      '127.0.0.1/1',
      '203.0.113.9/1',
      '203.0.113.9/1',
      '127.0.0.1/1',
      '203.0.113.9/1',
      '203.0.113.9/12',
    ]);
  });

  it('30 anonymous logouts varying the port, the case or the mapped form of one address write one row', async () => {
    const mark = (await t.db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;
    const forms = ['198.51.100.7', '198.51.100.7:1', '[::ffff:198.51.100.7]:2', '::FFFF:198.51.100.7', ' 198.51.100.7 '];
    for (let i = 0; i < 30; i++) {
      expect((await send(t.url, 'POST', LOGOUT, { 'x-forwarded-for': `10.${i}.0.1, ${forms[i % forms.length]}` })).status).toBe(200);
    }
    expect(await t.db.query(`SELECT "RemoteIp" FROM "UserLogout" WHERE "Id" > $1`, [mark])).toEqual([{ RemoteIp: '198.51.100.7' }]);
  });

  it('an IPv6 client gets one anonymous logout row per minute for its whole /64', async () => {
    const mark = (await t.db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;
    for (let i = 1; i <= 20; i++) {
      expect((await send(t.url, 'POST', LOGOUT, { 'x-forwarded-for': `2001:db8:5:6::${i.toString(16)}` })).status).toBe(200);
    }
    expect(await t.db.query(`SELECT "RemoteIp" FROM "UserLogout" WHERE "Id" > $1`, [mark])).toEqual([{ RemoteIp: '2001:db8:5:6::1' }]);
  });
});

describe.each([
  { store: 'Redis (RedisChannelPrefix namespaced)', redis: true },
  { store: 'the database (no Redis)', redis: false },
])('the once-a-minute anonymous logout row holds across two nodes sharing $store', ({ redis }) => {
  let db: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let pooler: TcpProxy;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    db = await createTestDatabase();
    const env: Record<string, string> = { TrustProxy: 'True', ...(redis ? { RedisConnectionString: 'redis://127.0.0.1:6379' } : {}) };
    // B reaches the same database by another address (as through a pooler): one deployment all the same.
    pooler = await startTcpProxy(Number(new URL(db.url).port || 5432));
    a = await startTestApp({ db, clock, env });
    b = await startTestApp({ db, clock, env: { ...env, ConnectionString: pooler.url(db.url) } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await pooler?.close();
    await db?.drop();
  });

  const rows = () => db.query<{ RemoteIp: string }>(`SELECT "RemoteIp" FROM "UserLogout" ORDER BY "Id"`);

  it('30 logouts alternating between the nodes, then a burst of 30 at once, write one row; a minute later one more', async () => {
    for (let i = 0; i < 30; i++) {
      const node = i % 2 === 0 ? a : b;
      expect((await send(node.url, 'POST', LOGOUT, { 'x-forwarded-for': '198.51.100.70' })).status).toBe(200);
    }
    expect(await rows()).toEqual([{ RemoteIp: '198.51.100.70' }]);

    clock.advance(61_000);
    const burst = await Promise.all(
      Array.from({ length: 30 }, (_, i) => send(i % 2 === 0 ? a.url : b.url, 'POST', LOGOUT, { 'x-forwarded-for': '198.51.100.70' })),
    );
    expect(burst.every((res) => res.status === 200)).toBe(true);
    expect(await rows()).toEqual([{ RemoteIp: '198.51.100.70' }, { RemoteIp: '198.51.100.70' }]);

    // Another address is its own.
    expect((await send(b.url, 'POST', LOGOUT, { 'x-forwarded-for': '198.51.100.71' })).status).toBe(200);
    expect((await rows()).map((r) => r.RemoteIp)).toEqual(['198.51.100.70', '198.51.100.70', '198.51.100.71']);
  });
});
