import { Bus, CHANNELS } from '../src/bus/bus';
import { RedisBus } from '../src/bus/redis.bus';
import { ManualClock } from '../src/common/clock';
import { LOGOUT_WARNING_HEADER } from '../src/sessions/logout.service';
import { createKey, sessionWithApiKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { openStream } from './helpers/streams';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { insertUser, signInAdministrator } from './helpers/users';
import { eventually } from './helpers/eventually';

/**
 * Redis lost in the middle of a run (issue 11). Node A reaches Redis through a TCP proxy of the
 * test's own, cut both ways (refused, black-holed); node B shares the database and reaches Redis
 * directly. Logout, key creation and revocation on A answer within 5 s whatever Redis does; what A
 * could not publish is published when Redis answers again; meanwhile the database read already
 * refuses the ended session on B. B re-checks its streams only hourly here, so a stream closing on B
 * proves the message itself arrived.
 */
const REDIS = 'redis://127.0.0.1:6379';
const STRONG = 'Corr3ct-Horse-Battery';
const FIVE_SECONDS = 5_000;

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = Date.now();
  const result = await work();
  return { result, ms: Date.now() - started };
}

const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

describe('Redis refused or black-holed in the middle of a run, two nodes', () => {
  let proxy: TcpProxy;
  let a: TestApp;
  let b: TestApp;
  let adminA: Browser;
  const clock = new ManualClock(Date.now());
  const hourlyRecheck = { RevokedSessionCheckInterval: 'h', RevokedSessionCheckIntervalValue: '1' };

  beforeAll(async () => {
    proxy = await startTcpProxy(6379);
    a = await startTestApp({ clock, env: { RedisConnectionString: proxy.url(REDIS), ...hourlyRecheck } });
    b = await startTestApp({ clock, db: a.db, env: { RedisConnectionString: REDIS, ...hourlyRecheck } });
    await eventually(() => a.app.get(Bus).connected && b.app.get(Bus).connected);
    ({ browser: adminA } = await signInAdministrator(a));
  });
  afterAll(async () => {
    await proxy.restore();
    await b.close();
    await a.close();
    await proxy.close();
  });
  afterEach(async () => proxy.restore());

  /** Signs `name` in on A and opens a stream on B with that session. */
  async function streamOnB(name: string) {
    await insertUser(a, { name, password: STRONG });
    const browser = new Browser(a.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG })).status).toBe(200);
    clock.advance(1000);
    const stream = await openStream(`${b.url}/api/Watcher/Stream`, { cookie: cookieOf(browser) });
    expect(stream.status).toBe(200);
    await stream.waitFor((text) => text.length > 0);
    return { browser, stream, cookie: cookieOf(browser) };
  }

  for (const fault of ['blackhole', 'refuse'] as const) {
    it(`${fault}: logout, key revocation and RevokeTokens answer within 5 s; what could not be published goes out when Redis returns`, async () => {
      const { browser, stream, cookie } = await streamOnB(`${fault}-logout`);
      const revoked = await streamOnB(`${fault}-revoked`);
      const keyUser = await insertUser(a, { name: `${fault}-key`, password: STRONG });
      const key = await createKey(a, adminA, keyUser.id);
      await eventually(async () => (await sessionWithApiKey(b, key.apiKey)).status === 200);
      const revokedUser = await a.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = $1`, [`${fault}-revoked`]);

      if (fault === 'blackhole') proxy.blackhole();
      else await proxy.refuse();

      const logout = await timed(() => browser.post('/api/Authentication/Logout'));
      expect(logout.result.status).toBe(200);
      // The database took the revocation: nothing to warn about.
      expect(logout.result.headers.get(LOGOUT_WARNING_HEADER)).toBeNull();
      expect(logout.ms).toBeLessThan(FIVE_SECONDS);
      const revoke = await timed(() => adminA.delete(`/api/UserRegistry/${keyUser.id}/ApiKey/${key.id}`));
      expect(revoke.result.status).toBe(204);
      expect(revoke.ms).toBeLessThan(FIVE_SECONDS);
      const cut = await timed(() => adminA.post(`/api/UserRegistry/RevokeTokens/${revokedUser[0].Id}`));
      expect(cut.result.status).toBe(204);
      expect(cut.ms).toBeLessThan(FIVE_SECONDS);
      const created = await timed(() => createKey(a, adminA, keyUser.id, { name: 'made during the outage' }));
      expect(created.ms).toBeLessThan(FIVE_SECONDS);

      // Meanwhile the ended sessions are refused on B by its database read, and A keeps the messages.
      expect((await new Browser(b.url).get('/api/Authentication/Session', { cookie })).status).toBe(401);
      expect((await new Browser(b.url).get('/api/Authentication/Session', { cookie: revoked.cookie })).status).toBe(401);
      expect((a.app.get(Bus) as RedisBus).pending.queued).toBeGreaterThanOrEqual(3);
      expect(stream.isEnded()).toBe(false);
      expect(revoked.stream.isEnded()).toBe(false);
      // B still holds the revoked key in its set: its once-a-minute reload or the message will drop it.
      expect((await sessionWithApiKey(b, key.apiKey)).status).toBe(200);

      await proxy.restore();
      // Redis answers again: A publishes what it kept, B closes the streams and drops the key.
      await stream.ended;
      await revoked.stream.ended;
      await eventually(async () => (await sessionWithApiKey(b, key.apiKey)).status === 401);
      await eventually(async () => (await sessionWithApiKey(b, created.result.apiKey)).status === 200);
      await eventually(() => (a.app.get(Bus) as RedisBus).pending.queued === 0);
      expect((a.app.get(Bus) as RedisBus).pending.dropped).toBe(0);
    });
  }

  it('black-holed: the heartbeat finds the silent connections, and A reconnects by itself afterwards', async () => {
    const bus = a.app.get(Bus) as RedisBus;
    expect(bus.connected).toBe(true);
    proxy.blackhole();
    // Nothing fails on its own in a black hole: the PING deadline is what notices (5 s interval + 2 s).
    await eventually(() => !bus.connected, 20_000);
    await proxy.restore();
    await eventually(() => bus.connected, 20_000);
    // And it delivers again, both ways.
    const heard: string[] = [];
    const off = b.app.get(Bus).subscribe('tm-test-after-heal', (m) => heard.push(m));
    try {
      await eventually(async () => {
        await bus.publish('tm-test-after-heal', 'hello');
        await new Promise((resolve) => setTimeout(resolve, 50));
        return heard.length > 0;
      });
    } finally {
      off();
    }
  });
});

describe('RedisChannelPrefix: two deployments sharing one Redis', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp({ env: { RedisConnectionString: REDIS, RedisChannelPrefix: 'tm-test-deployment-a:' } });
    b = await startTestApp({ env: { RedisConnectionString: REDIS, RedisChannelPrefix: 'tm-test-deployment-b:' } });
    await eventually(() => a.app.get(Bus).connected && b.app.get(Bus).connected);
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a logout of user 1 in one deployment leaves the streams of user 1 in the other open; key messages stay apart', async () => {
    const adminA = (await signInAdministrator(a)).browser;
    const adminB = (await signInAdministrator(b)).browser;
    const streamA = await openStream(`${a.url}/api/ServiceChange/Stream`, { cookie: cookieOf(adminA) });
    const streamB = await openStream(`${b.url}/api/ServiceChange/Stream`, { cookie: cookieOf(adminB) });
    await streamA.waitFor((text) => text.length > 0);
    await streamB.waitFor((text) => text.length > 0);
    const keyMessages = { a: 0, b: 0 };
    const offA = a.app.get(Bus).subscribe(CHANNELS.apiKeySet, () => keyMessages.a++);
    const offB = b.app.get(Bus).subscribe(CHANNELS.apiKeySet, () => keyMessages.b++);
    try {
      const user = await insertUser(a, { name: 'keyed-in-a', password: STRONG });
      await createKey(a, adminA, user.id);
      // Both deployments' Administrator is user 1.
      expect((await adminA.post('/api/Authentication/Logout')).status).toBe(200);
      await streamA.ended;
      await eventually(() => keyMessages.a === 1);
      // Given time to arrive if it were going to (a stream closes within a second of a logout).
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(streamB.isEnded()).toBe(false);
      expect(keyMessages.b).toBe(0);
      // The stream in B did not see A's registry change either.
      expect(streamB.received()).not.toContain('UserRegistryApiKey');
    } finally {
      offA();
      offB();
      streamB.abort();
    }
  });
});
