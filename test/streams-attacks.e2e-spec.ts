import { Bus, CHANNELS } from '../src/bus/bus';
import { ManualClock } from '../src/common/clock';
import { StreamRegistry } from '../src/streams/stream-registry.service';
import { createKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { Browser } from './helpers/http';
import { openStream, OpenedStream } from './helpers/streams';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

/**
 * Contract 13, streams stay in scope, attacked with subscriptions made BEFORE the caller's scope
 * changes: a stream opened while its caller could read something must stop receiving it as soon as the
 * change that takes the right away is made (on any node), not at the next periodic re-check; a caller
 * moved to another tenant follows its new tenant; a caller deactivated, or whose tenant is
 * deactivated, loses the stream at once. Checked on every streaming route (ServiceChange, Watcher) and
 * every credential (bearer session, API key), through Redis between two nodes and on one node.
 * The periodic re-check is never run here (RevokedSessionCheckInterval is long).
 */
const STRONG = 'Corr3ct-Horse-Battery';
const MARKER = '{"marker":"settled"}';

describe.each([
  { bus: 'Redis, changes on one node, streams on the other', redis: true },
  { bus: 'the in-process bus, one node', redis: false },
])('streams follow a scope that changes after they were opened, over $bus', ({ redis }) => {
  let db: TestDatabase;
  let writer: TestApp;
  let reader: TestApp;
  let admin: Browser;
  let landlordStream: OpenedStream;
  let landlordWatcher: OpenedStream;
  const open: OpenedStream[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const clock = new ManualClock(Date.now());
    const env: Record<string, string> = { RevokedSessionCheckInterval: 'h', RevokedSessionCheckIntervalValue: '1', ...(redis ? { RedisConnectionString: 'redis://127.0.0.1:6379' } : {}) };
    writer = await startTestApp({ db, clock, env });
    reader = redis ? await startTestApp({ db, clock, env }) : writer;
    ({ browser: admin } = await signInAdministrator(writer));
    await insertUser(writer, { name: 'landlord-watch', password: STRONG, landlord: true });
    landlordStream = await watch('/api/ServiceChange/Stream', await bearer('landlord-watch'));
    landlordWatcher = await watch('/api/Watcher/Stream', await bearer('landlord-watch'));
  });
  afterAll(async () => {
    for (const stream of open) stream.abort();
    if (reader !== writer) await reader?.close();
    await writer?.close();
    await db?.drop();
  });

  async function bearer(name: string): Promise<Record<string, string>> {
    const res = await new Browser(reader.url).post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
    expect(res.status).toBe(200);
    return { authorization: `Bearer ${res.json.token}` };
  }

  async function watch(path: string, headers: Record<string, string>): Promise<OpenedStream> {
    const stream = await openStream(`${reader.url}${path}`, headers);
    expect(stream.status).toBe(200);
    await stream.waitFor((text) => text.startsWith(': connected'));
    open.push(stream);
    return stream;
  }

  /** Everything published so far has reached every open stream of the reading node (or ended it). */
  async function settle(...streams: OpenedStream[]): Promise<void> {
    for (const [channel, landlord] of [
      [CHANNELS.serviceChange, landlordStream],
      [CHANNELS.watcher, landlordWatcher],
    ] as const) {
      const before = landlord.received().split(MARKER).length;
      await writer.app.get(Bus).publish(channel, MARKER);
      await landlord.waitFor((text) => text.split(MARKER).length > before);
    }
    // Scope reads under way (messages held for them) finish before a heartbeat is written after them.
    const registry = reader.app.get(StreamRegistry) as unknown as { streams: Set<{ held: unknown[] | null }> };
    while ([...registry.streams].some((stream) => stream.held !== null)) await new Promise((resolve) => setTimeout(resolve, 5));
    const beats = streams.map((s) => s.received().split(': heartbeat').length);
    (reader.app.get(StreamRegistry) as unknown as { heartbeat(): void }).heartbeat();
    await Promise.all(streams.map((s, i) => (s.isEnded() ? Promise.resolve('') : s.waitFor((text) => text.split(': heartbeat').length > beats[i] || s.isEnded()))));
  }

  const ids = (stream: OpenedStream, entity: string) =>
    [...stream.received().matchAll(new RegExp(`"entity":"${entity}","id":(\\d+)`, 'g'))].map((m) => Number(m[1]));

  it('ServiceChange (bearer and API key): permission 35 taken from the role stops user changes at once', async () => {
    const watcher = await insertUser(writer, { name: `perm-${redis}`, password: STRONG, tenantName: `Perm ${redis}`, permissions: [Permission.ReadWriteSecurityUser] });
    const key = await createKey(writer, admin, watcher.id);
    const byToken = await watch('/api/ServiceChange/Stream', await bearer(`perm-${redis}`));
    const byKey = await watch('/api/ServiceChange/Stream', { 'x-api-key': key.apiKey });

    const before = await admin.post('/api/UserRegistry', { name: `seen-${redis}`, roleRegistryId: watcher.roleRegistryId, active: true, password: 'An0ther-Strong-Pass' });
    expect(before.status).toBe(201);
    await settle(byToken, byKey);
    expect(ids(byToken, 'UserRegistry')).toContain(before.json.id);
    expect(ids(byKey, 'UserRegistry')).toContain(before.json.id);

    expect((await admin.put(`/api/RoleRegistry/${watcher.roleRegistryId}`, { permissions: [] })).status).toBe(200);
    const after = await admin.post('/api/UserRegistry', { name: `unseen-${redis}`, roleRegistryId: watcher.roleRegistryId, active: true, password: 'An0ther-Strong-Pass' });
    expect(after.status).toBe(201);
    expect((await admin.put(`/api/UserRegistry/${before.json.id}`, { email: 'x@example.com' })).status).toBe(200);
    await settle(byToken, byKey);
    for (const stream of [byToken, byKey]) {
      expect(stream.isEnded()).toBe(false);
      expect(ids(stream, 'UserRegistry').filter((id) => id === after.json.id)).toEqual([]);
      // The earlier user's change after the demotion is not shown either.
      expect(ids(stream, 'UserRegistry').filter((id) => id === before.json.id)).toHaveLength(1);
    }
    expect(ids(landlordStream, 'UserRegistry')).toContain(after.json.id);
  });

  it('Watcher and ServiceChange: a user moved to another tenant follows the new tenant at once', async () => {
    const mover = await insertUser(writer, { name: `mover-${redis}`, password: STRONG, tenantName: `Old ${redis}`, permissions: [Permission.ReadWriteSecurityUser] });
    const target = await insertUser(writer, { name: `anchor-${redis}`, password: STRONG, tenantName: `New ${redis}`, permissions: [Permission.ReadWriteSecurityUser] });
    const headers = await bearer(`mover-${redis}`);
    const watcherStream = await watch('/api/Watcher/Stream', headers);
    const changes = await watch('/api/ServiceChange/Stream', headers);
    const bus = writer.app.get(Bus);

    expect((await admin.put(`/api/UserRegistry/${mover.id}`, { roleRegistryId: target.roleRegistryId })).status).toBe(200);
    await bus.publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: mover.tenantRegistryId, activation: 'old tenant' }));
    await bus.publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: target.tenantRegistryId, activation: 'new tenant' }));
    const inOld = await admin.post('/api/UserRegistry', { name: `old-user-${redis}`, roleRegistryId: mover.roleRegistryId, active: true, password: 'An0ther-Strong-Pass' });
    const inNew = await admin.post('/api/UserRegistry', { name: `new-user-${redis}`, roleRegistryId: target.roleRegistryId, active: true, password: 'An0ther-Strong-Pass' });
    await settle(watcherStream, changes);

    expect(watcherStream.received()).not.toContain('old tenant');
    expect(watcherStream.received()).toContain('new tenant');
    expect(ids(changes, 'UserRegistry')).not.toContain(inOld.json.id);
    expect(ids(changes, 'UserRegistry')).toContain(inNew.json.id);
  });

  it.each([
    ['the user is deactivated', async (u: { id: number; roleRegistryId: number; tenantRegistryId: number }) => admin.put(`/api/UserRegistry/${u.id}`, { active: false })],
    ['its tenant is deactivated', async (u: { id: number; roleRegistryId: number; tenantRegistryId: number }) => admin.put(`/api/TenantRegistry/${u.tenantRegistryId}`, { active: false })],
  ])('every stream (bearer and API key) ends at once when %s, and receives nothing after', async (_what, change) => {
    const name = `gone-${Math.random().toString(36).slice(2, 8)}`;
    const user = await insertUser(writer, { name, password: STRONG, tenantName: `Tenant ${name}`, permissions: [Permission.ReadWriteSecurityUser] });
    const key = await createKey(writer, admin, user.id);
    const headers = await bearer(name);
    const streams = [
      await watch('/api/ServiceChange/Stream', headers),
      await watch('/api/Watcher/Stream', headers),
      await watch('/api/ServiceChange/Stream', { 'x-api-key': key.apiKey }),
      await watch('/api/Watcher/Stream', { 'x-api-key': key.apiKey }),
    ];
    expect((await change(user)).status).toBe(200);
    await writer.app.get(Bus).publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: user.tenantRegistryId, activation: 'after the change' }));
    await Promise.all(streams.map((s) => s.ended));
    for (const stream of streams) expect(stream.received()).not.toContain('after the change');
  });
});
