import { startTestApp, TestApp } from './helpers/app';
import { loadSettings } from '../src/config/settings';
import { requestWithoutCookies } from './helpers/api-keys';

/**
 * Contract 13, proxies: the client address is the right-most X-Forwarded-For entry that is not a
 * trusted proxy, under each form of TrustProxy; what a client writes to the left is never used, in
 * the audit trail or in a per-address rule (the once-a-minute anonymous logout row). The test app
 * listens on 127.0.0.1, so every request's peer is 127.0.0.1.
 */
const SIGN_IN = '/api/Authentication/ByUserNamePassword';

async function remoteIpOfFailedSignIn(t: TestApp, forwardedFor: string | null): Promise<string> {
  const userName = `probe-${Math.random().toString(36).slice(2)}`;
  const headers: Record<string, string> = forwardedFor === null ? {} : { 'x-forwarded-for': forwardedFor };
  expect((await requestWithoutCookies(`${t.url}${SIGN_IN}`, 'POST', headers, { userName, password: 'x' })).status).toBe(401);
  const [row] = await t.db.query<{ RemoteIp: string }>(`SELECT "RemoteIp" FROM "UserLogin" WHERE "CreatedUser" = $1`, [userName]);
  return row.RemoteIp;
}

/** 30 anonymous logouts whose forwarded-for header varies only in its client-written left part. */
async function anonymousLogoutRows(t: TestApp, trustedRightPart: string): Promise<Array<{ RemoteIp: string }>> {
  // UserLogout is append-only (contract 15): the rows after a mark, instead of emptying it.
  const mark = (await t.db.query<{ mark: string }>(`SELECT COALESCE(max("Id"), 0)::text AS mark FROM "UserLogout"`))[0].mark;
  for (let i = 0; i < 30; i++) {
    const forged = `198.51.100.${i}, 192.0.2.${(i * 7) % 250}`;
    const res = await requestWithoutCookies(`${t.url}/api/Authentication/Logout`, 'POST', {
      'x-forwarded-for': trustedRightPart ? `${forged}, ${trustedRightPart}` : forged,
    });
    expect(res.status).toBe(200);
  }
  return t.db.query<{ RemoteIp: string }>(`SELECT "RemoteIp" FROM "UserLogout" WHERE "Id" > $1 ORDER BY "Id"`, [mark]);
}

describe.each([
  {
    form: 'False (default)',
    env: {} as Record<string, string>,
    cases: [
      ['198.51.100.66, 203.0.113.7', '127.0.0.1'],
      [null, '127.0.0.1'],
    ],
    rightPart: '203.0.113.7',
    logoutAddress: '127.0.0.1',
  },
  {
    form: 'True (one hop: the immediate peer)',
    env: { TrustProxy: 'True' },
    cases: [
      ['198.51.100.66, 203.0.113.7', '203.0.113.7'],
      ['6.6.6.6, 7.7.7.7, 203.0.113.7', '203.0.113.7'],
      ['203.0.113.7', '203.0.113.7'],
      [null, '127.0.0.1'],
    ],
    rightPart: '203.0.113.7',
    logoutAddress: '203.0.113.7',
  },
  {
    form: 'a hop count (2)',
    env: { TrustProxy: '2' },
    cases: [
      ['6.6.6.6, 198.51.100.66, 203.0.113.7', '198.51.100.66'],
      ['1.1.1.1, 2.2.2.2, 198.51.100.66, 203.0.113.7', '198.51.100.66'],
      [null, '127.0.0.1'],
    ],
    rightPart: '198.51.100.66, 203.0.113.7',
    logoutAddress: '198.51.100.66',
  },
  {
    form: 'a list of addresses and ranges',
    env: { TrustProxy: '127.0.0.1, 10.0.0.0/8' },
    cases: [
      ['6.6.6.6, 198.51.100.66, 10.1.2.3', '198.51.100.66'],
      ['6.6.6.6, 198.51.100.66, 10.1.2.3, 10.9.9.9', '198.51.100.66'],
      ['10.0.0.1, 203.0.113.7', '203.0.113.7'],
      [null, '127.0.0.1'],
    ],
    rightPart: '198.51.100.66, 10.1.2.3',
    logoutAddress: '198.51.100.66',
  },
  {
    form: 'a list that does not hold the peer',
    env: { TrustProxy: '10.0.0.0/8' },
    cases: [['198.51.100.66, 10.1.2.3', '127.0.0.1']],
    rightPart: '10.1.2.3',
    logoutAddress: '127.0.0.1',
  },
])('TrustProxy as $form (contract 13)', ({ env, cases, rightPart, logoutAddress }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env });
  });
  afterAll(async () => t.close());

  it.each(cases as Array<[string | null, string]>)('X-Forwarded-For %p is recorded as %s', async (forwardedFor, expected) => {
    expect(await remoteIpOfFailedSignIn(t, forwardedFor)).toBe(expected);
  });

  it('30 anonymous logouts with forged left parts write one row, for the real client address', async () => {
    const rows = await anonymousLogoutRows(t, rightPart);
    expect(rows).toEqual([{ RemoteIp: logoutAddress }]);
    // A minute later the same client gets its next row.
    t.clock.advance(61_000);
    expect((await requestWithoutCookies(`${t.url}/api/Authentication/Logout`, 'POST', { 'x-forwarded-for': `9.9.9.9, ${rightPart}` })).status).toBe(200);
    expect(await t.db.query(`SELECT "RemoteIp" FROM "UserLogout" ORDER BY "Id"`)).toEqual([{ RemoteIp: logoutAddress }, { RemoteIp: logoutAddress }]);
  });
});

describe('TrustProxy values that do not parse refuse to start (one line)', () => {
  it.each(['yes', 'all', '-1', '99', '10.0.0.0/33', '300.1.1.1', 'proxy.example, 10.0.0.1'])('%p', (value) => {
    // The same parse `npm start` runs first (src/main.ts prints this message and exits).
    expect(() => loadSettings({ TrustProxy: value })).toThrow(/^Refusing to start, invalid settings:\n {2}TrustProxy: [^\n]+$/);
  });
});
