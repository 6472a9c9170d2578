import { randomBytes } from 'node:crypto';
import { ActiveApiKeys } from '../src/api-keys/active-api-keys';
import { Bus, CHANNELS } from '../src/bus/bus';
import { ManualClock } from '../src/common/clock';
import { startTestApp, TestApp } from './helpers/app';
import { createKey, sessionWithApiKey } from './helpers/api-keys';
import { Browser } from './helpers/http';
import { openStream } from './helpers/streams';
import { insertUser, signInAdministrator } from './helpers/users';
import { LogoutReasonId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';
const REDIS = 'redis://127.0.0.1:6379';
/** Nothing listens there: a node whose Redis is down. */
const NO_REDIS = 'redis://127.0.0.1:6390';

/**
 * Retries `probe` until it answers true; the cross-node effects travel asynchronously over Redis. The
 * deadline is generous for a loaded machine (a count of attempts was not: each took what the machine gave it).
 */
async function eventually(probe: () => Promise<boolean>, what: string, deadlineMs = 60_000): Promise<void> {
  for (const end = Date.now() + deadlineMs; Date.now() < end; ) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never happened: ${what}`);
}

/** Resolves once `to` receives what `from` publishes, so its earlier subscriptions are in place too. */
async function connected(from: TestApp, to: TestApp): Promise<void> {
  const channel = `tm-test-probe-${randomBytes(4).toString('hex')}`;
  let received = false;
  const off = to.app.get(Bus).subscribe(channel, () => (received = true));
  try {
    await eventually(async () => {
      await from.app.get(Bus).publish(channel, 'probe').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 25));
      return received;
    }, 'the nodes hear each other');
  } finally {
    off();
  }
}

describe('several nodes on one PostgreSQL and one Redis (contract 1)', () => {
  let a: TestApp;
  let b: TestApp;
  let adminA: Browser;
  const clock = new ManualClock(Date.now());
  beforeAll(async () => {
    a = await startTestApp({ clock, env: { RedisConnectionString: REDIS } });
    b = await startTestApp({ clock, db: a.db, env: { RedisConnectionString: REDIS } });
    await connected(a, b);
    await connected(b, a);
    ({ browser: adminA } = await signInAdministrator(a));
  });
  afterAll(async () => {
    await b.close();
    await a.close();
  });

  it('a key created on one node is honoured on the other; revoked on one, refused on the other', async () => {
    const user = await insertUser(a, { name: 'two-nodes', password: STRONG });
    const key = await createKey(a, adminA, user.id);
    expect((await sessionWithApiKey(a, key.apiKey)).status).toBe(200);
    await eventually(async () => (await sessionWithApiKey(b, key.apiKey)).status === 200, 'node B accepts the new key');
    expect((await sessionWithApiKey(b, key.apiKey)).json).toMatchObject({ userName: 'two-nodes', authenticationType: 'ApiKey' });

    expect((await adminA.delete(`/api/UserRegistry/${user.id}/ApiKey/${key.id}`)).status).toBe(204);
    expect((await sessionWithApiKey(a, key.apiKey)).status).toBe(401);
    await eventually(async () => (await sessionWithApiKey(b, key.apiKey)).status === 401, 'node B refuses the revoked key');
    expect((await sessionWithApiKey(b, key.apiKey)).json.detail).toBe('Key Not Found');
  });

  it('a session signed in on one node works on the other; logout on one closes its streams on the other', async () => {
    await insertUser(a, { name: 'roaming', password: STRONG });
    const browserA = new Browser(a.url);
    expect((await browserA.post('/api/Authentication/ByUserNamePassword', { userName: 'roaming', password: STRONG })).status).toBe(200);
    clock.advance(1000);
    const cookie = [...browserA.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const onB = await openStream(`${b.url}/api/Watcher/Stream`, { cookie });
    expect(onB.status).toBe(200);
    await onB.waitFor((text) => text.length > 0);
    expect((await browserA.post('/api/Authentication/Logout')).status).toBe(200);
    await onB.ended;
    expect((await sessionWithApiKey(b, 'x')).status).toBe(401);
    const replay = await fetch(`${b.url}/api/Authentication/Session`, { headers: { cookie } });
    expect(replay.status).toBe(401);
  });

  it('RevokeTokens on one node closes the user\'s streams on the other', async () => {
    const user = await insertUser(a, { name: 'revoked-across', password: STRONG });
    const browserB = new Browser(b.url);
    expect((await browserB.post('/api/Authentication/ByUserNamePassword', { userName: 'revoked-across', password: STRONG })).status).toBe(200);
    clock.advance(1000);
    const cookie = [...browserB.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const onB = await openStream(`${b.url}/api/ServiceChange/Stream`, { cookie });
    await onB.waitFor((text) => text.length > 0);
    expect((await adminA.post(`/api/UserRegistry/RevokeTokens/${user.id}`)).status).toBe(204);
    await onB.ended;
  });

  it('one session ended on one node: its streams on the other close within a second, the user\'s other session stays', async () => {
    const user = await insertUser(a, { name: 'two-sessions-across', password: STRONG });
    const signIn = async (node: TestApp) => {
      const browser = new Browser(node.url);
      const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'two-sessions-across', password: STRONG });
      expect(res.status).toBe(200);
      clock.advance(1000);
      return { browser, sid: (JSON.parse(Buffer.from(res.json.token.split('.')[1], 'base64url').toString()) as { sid: string }).sid };
    };
    const ended = await signIn(b);
    const kept = await signIn(a);
    const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const endedOnB = await openStream(`${b.url}/api/Watcher/Stream`, { cookie: cookieOf(ended.browser) });
    const keptOnB = await openStream(`${b.url}/api/ServiceChange/Stream`, { cookie: cookieOf(kept.browser) });
    await endedOnB.waitFor((text) => text.length > 0);
    await keptOnB.waitFor((text) => text.length > 0);

    // Ended on node A by the user's other session; node B hears of it over Redis.
    expect((await kept.browser.delete(`/api/Authentication/Sessions/${ended.sid}`)).status).toBe(204);
    const closedWithin = await Promise.race([
      endedOnB.ended.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000).unref()),
    ]);
    expect(closedWithin).toBe(true);
    expect(keptOnB.isEnded()).toBe(false);
    // Refused on both nodes, while the other session goes on on both.
    expect((await new Browser(b.url).get('/api/Authentication/Session', { cookie: cookieOf(ended.browser) })).status).toBe(401);
    expect((await new Browser(a.url).get('/api/Authentication/Session', { cookie: cookieOf(ended.browser) })).status).toBe(401);
    expect((await new Browser(b.url).get('/api/Authentication/Session', { cookie: cookieOf(kept.browser) })).status).toBe(200);
    const [row] = await a.db.query<{ EndReasonId: number; EndedByUser: string }>(`SELECT * FROM "UserSession" WHERE "Id" = $1`, [ended.sid]);
    expect(row).toMatchObject({ EndReasonId: LogoutReasonId.SessionEnded, EndedByUser: 'two-sessions-across' });
    void user;
    keptOnB.abort();
  });

  it('relays bus events published on one node to the streams of the other', async () => {
    const user = await insertUser(a, { name: 'watching-across', password: STRONG });
    const key = await createKey(a, adminA, user.id);
    await eventually(async () => (await sessionWithApiKey(b, key.apiKey)).status === 200, 'node B accepts the key');
    const onB = await openStream(`${b.url}/api/Watcher/Stream`, { 'x-api-key': key.apiKey });
    await onB.waitFor((text) => text.length > 0);
    // Tagged with the user's tenant: untagged Watcher messages reach landlord streams only (contract 13).
    await a.app.get(Bus).publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: user.tenantRegistryId, text: 'from node A' }));
    await onB.waitFor((text) => text.includes('from node A'));
    onB.abort();
  });

  describe('with Redis down on one node', () => {
    let c: TestApp;
    beforeAll(async () => {
      c = await startTestApp({ clock, db: a.db, env: { RedisConnectionString: NO_REDIS } });
    });
    afterAll(async () => c.close());

    it('keeps serving: sign-in, sessions, keys, logout', async () => {
      await insertUser(c, { name: 'offline', password: STRONG });
      const browser = new Browser(c.url);
      expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'offline', password: STRONG })).status).toBe(200);
      expect((await browser.get('/api/Authentication/Session')).status).toBe(200);
      const { browser: adminC } = await signInAdministrator(c);
      const user = await insertUser(c, { name: 'offline-key', password: STRONG });
      const key = await createKey(c, adminC, user.id);
      expect((await sessionWithApiKey(c, key.apiKey)).status).toBe(200);

      // A stream on this node still closes at logout, without the bus.
      clock.advance(1000);
      const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
      const stream = await openStream(`${c.url}/api/Watcher/Stream`, { cookie });
      await stream.waitFor((text) => text.length > 0);
      const logout = await browser.post('/api/Authentication/Logout');
      expect(logout.status).toBe(200);
      expect(logout.headers.get('x-service-logout-warning')).toBeNull();
      await stream.ended;
    });

    it('a key revoked elsewhere stops working at the reload', async () => {
      const user = await insertUser(a, { name: 'revoked-while-offline', password: STRONG });
      const key = await createKey(a, adminA, user.id);
      await c.app.get(ActiveApiKeys).reload();
      expect((await sessionWithApiKey(c, key.apiKey)).status).toBe(200);
      // Revoked on node A: its message cannot reach node C.
      expect((await adminA.delete(`/api/UserRegistry/${user.id}/ApiKey/${key.id}`)).status).toBe(204);
      expect((await sessionWithApiKey(a, key.apiKey)).status).toBe(401);
      // Node C catches up at its once-a-minute reload (time moved, not slept).
      clock.advance(61_000);
      const res = await sessionWithApiKey(c, key.apiKey);
      expect(res.status).toBe(401);
      expect(res.json.detail).toBe('Key Not Found');
    });

    it('a key revoked directly in the database stops working when the reload runs', async () => {
      const { browser: adminC } = await signInAdministrator(c);
      const user = await insertUser(c, { name: 'revoked-in-db', password: STRONG });
      const key = await createKey(c, adminC, user.id);
      expect((await sessionWithApiKey(c, key.apiKey)).status).toBe(200);
      await c.db.query(`UPDATE "UserRegistryApiKey" SET "Deleted" = true WHERE "Id" = $1`, [key.id]);
      await c.app.get(ActiveApiKeys).reload();
      expect((await sessionWithApiKey(c, key.apiKey)).status).toBe(401);
    });
  });
});
