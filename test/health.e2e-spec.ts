import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { startTcpProxy, TcpProxy } from './helpers/tcp-proxy';
import { eventually } from './helpers/eventually';

/**
 * GET /health/live and GET /health/ready (issue 11): public, cheap, no data. The node reaches
 * PostgreSQL and Redis through TCP proxies of the test's own, cut in the middle of the run.
 */
describe('liveness and readiness', () => {
  let db: TestDatabase;
  let pg: TcpProxy;
  let redis: TcpProxy;
  let t: TestApp;
  const probe = (path: string) => new Browser(t.url, {}).get(path);

  beforeAll(async () => {
    db = await createTestDatabase();
    pg = await startTcpProxy(Number(new URL(db.url).port || 5432));
    redis = await startTcpProxy(6379);
    t = await startTestApp({ db, env: { ConnectionString: pg.url(db.url), RedisConnectionString: redis.url('redis://127.0.0.1:6379') } });
    await eventually(async () => (await probe('/health/ready')).status === 200);
  });
  afterAll(async () => {
    await pg.restore();
    await redis.restore();
    await t.close();
    await pg.close();
    await redis.close();
    await db.drop();
  });
  afterEach(async () => {
    await pg.restore();
    await redis.restore();
    // A database found unreachable is probed again once a second: ready follows within that.
    await eventually(async () => (await probe('/health/ready')).status === 200);
  });

  it('answers anonymously, sets no cookie and says nothing but its status', async () => {
    const live = await probe('/health/live');
    expect({ status: live.status, json: live.json, cookies: live.setCookies }).toEqual({ status: 200, json: { status: 'live' }, cookies: [] });
    const ready = await probe('/health/ready');
    expect({ status: ready.status, json: ready.json, cookies: ready.setCookies }).toEqual({ status: 200, json: { status: 'ready' }, cookies: [] });
    expect(ready.headers.get('cache-control')).toBe('no-store');
  });

  it('PostgreSQL black-holed: ready answers 503 naming the database within 5 s; live stays 200; ready again after', async () => {
    pg.blackhole();
    const started = Date.now();
    const ready = await probe('/health/ready');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(ready.status).toBe(503);
    expect(ready.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(ready.json).toMatchObject({ status: 503, title: 'Service Unavailable', failing: ['database'] });
    expect((await probe('/health/live')).status).toBe(200);
    await pg.restore();
    await eventually(async () => (await probe('/health/ready')).status === 200);
  });

  it('PostgreSQL refused: 503 naming the database at once', async () => {
    await pg.refuse();
    const ready = await probe('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.json.failing).toEqual(['database']);
  });

  it('Redis refused, then black-holed: 503 naming redis; ready again when it answers', async () => {
    await redis.refuse();
    await eventually(async () => (await probe('/health/ready')).status === 503);
    expect((await probe('/health/ready')).json.failing).toEqual(['redis']);
    await redis.restore();
    await eventually(async () => (await probe('/health/ready')).status === 200);

    // Black-holed, nothing fails by itself: the heartbeat's deadline finds it.
    redis.blackhole();
    await eventually(async () => (await probe('/health/ready')).status === 503);
    expect((await probe('/health/ready')).json.failing).toEqual(['redis']);
    await redis.restore();
    await eventually(async () => (await probe('/health/ready')).status === 200);
  });

  it('both down: both named', async () => {
    await pg.refuse();
    await redis.refuse();
    await eventually(async () => (await probe('/health/ready')).json?.failing?.length === 2);
    expect((await probe('/health/ready')).json.failing).toEqual(['database', 'redis']);
  });
});
