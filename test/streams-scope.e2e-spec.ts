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
 * Contract 13, streams stay in scope: a ServiceChange message reaches a stream only when its caller
 * could read the changed entry through the registry routes (same tenant and permission 35 for users
 * and keys, 34 for roles; tenants are the landlord's; a landlord reads all), and every message says
 * its tenantRegistryId. A Watcher message reaches the streams of its tenant and the landlords; one
 * without a tenant, landlords only. The changes are made on one node and watched on another, through
 * Redis, and on one node alone with the in-process bus.
 */
const STRONG = 'Corr3ct-Horse-Battery';
const MARKER = '{"marker":"end of the changes"}';

type Watcher = { name: string; stream: OpenedStream };

/** The `data:` payloads a stream received, parsed where JSON. */
function messages(stream: OpenedStream): unknown[] {
  return stream
    .received()
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.split('\n').map((line) => line.slice('data: '.length)).join('\n'))
    .map((data) => {
      try {
        return JSON.parse(data);
      } catch {
        return data;
      }
    });
}

describe.each([
  { bus: 'Redis, changes on one node, streams on the other', redis: true },
  { bus: 'the in-process bus, one node', redis: false },
])('stream scope over $bus (contract 13)', ({ redis }) => {
  let db: TestDatabase;
  let writer: TestApp;
  let reader: TestApp;
  let admin: Browser;
  let tenantA: number;
  let tenantB: number;
  let roleB: number;
  let userA: number;
  const open: OpenedStream[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const clock = new ManualClock(Date.now());
    const env: Record<string, string> = redis ? { RedisConnectionString: 'redis://127.0.0.1:6379' } : {};
    writer = await startTestApp({ db, clock, env });
    reader = redis ? await startTestApp({ db, clock, env }) : writer;
    ({ browser: admin } = await signInAdministrator(writer));
    const a = await insertUser(writer, { name: 'admin-a', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    const b = await insertUser(writer, { name: 'admin-b', password: STRONG, tenantName: 'Tenant B', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    await insertUser(writer, { name: 'roles-a', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityRole] });
    userA = (await insertUser(writer, { name: 'plain-a', password: STRONG, tenantName: 'Tenant A' })).id;
    await insertUser(writer, { name: 'landlord-b', password: STRONG, landlord: true });
    tenantA = a.tenantRegistryId;
    tenantB = b.tenantRegistryId;
    roleB = b.roleRegistryId;
  });
  afterAll(async () => {
    for (const stream of open) stream.abort();
    if (reader !== writer) await reader?.close();
    await writer?.close();
    await db?.drop();
  });

  async function watch(name: string, path: string, headers?: Record<string, string>): Promise<Watcher> {
    let credential = headers;
    if (!credential) {
      const browser = new Browser(reader.url);
      const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG });
      expect(res.status).toBe(200);
      credential = { authorization: `Bearer ${res.json.token}` };
    }
    const stream = await openStream(`${reader.url}${path}`, credential);
    expect(stream.status).toBe(200);
    await stream.waitFor((text) => text.startsWith(': connected'));
    open.push(stream);
    return { name, stream };
  }

  /** Everything published before this point has reached every stream on the reading node. */
  async function settle(watchers: Watcher[], landlord: Watcher, channel: string): Promise<void> {
    await writer.app.get(Bus).publish(channel, MARKER);
    await landlord.stream.waitFor((text) => text.includes(MARKER));
    (reader.app.get(StreamRegistry) as unknown as { heartbeat(): void }).heartbeat();
    await Promise.all(watchers.map((w) => w.stream.waitFor((text) => text.includes(': heartbeat'))));
  }

  it('ServiceChange: each stream gets exactly the changes its caller could read, each saying its tenant', async () => {
    const key = await createKey(writer, admin, userA);
    const landlord = await watch('landlord-b', '/api/ServiceChange/Stream');
    const adminA = await watch('admin-a', '/api/ServiceChange/Stream');
    const adminB = await watch('admin-b', '/api/ServiceChange/Stream');
    const rolesA = await watch('roles-a', '/api/ServiceChange/Stream');
    const plainByKey = await watch('plain-a (API key)', '/api/ServiceChange/Stream', { 'x-api-key': key.apiKey });
    const all = [landlord, adminA, adminB, rolesA, plainByKey];

    // Made by the landlord's administrator on the writing node.
    const userInB = await admin.post('/api/UserRegistry', { name: 'new-in-b', roleRegistryId: roleB, active: true, password: 'An0ther-Strong-Pass' });
    expect(userInB.status).toBe(201);
    const roleInA = await admin.post('/api/RoleRegistry', { name: 'auditors', tenantRegistryId: tenantA, permissions: [], active: true });
    expect(roleInA.status).toBe(201);
    const tenant = await admin.post('/api/TenantRegistry', { name: 'Tenant C', active: true });
    expect(tenant.status).toBe(201);
    const keyInA = await admin.post(`/api/UserRegistry/${userA}/ApiKey`, { name: 'second' });
    expect(keyInA.status).toBe(201);
    await settle(all, landlord, CHANNELS.serviceChange);

    const changes = (w: Watcher) =>
      messages(w.stream)
        .filter((m): m is { entity: string; id: number; tenantRegistryId: number } => typeof m === 'object' && m !== null && 'entity' in m)
        .map((m) => `${m.entity} ${m.id} @${m.tenantRegistryId}`);
    const userB = `UserRegistry ${userInB.json.id} @${tenantB}`;
    const roleA = `RoleRegistry ${roleInA.json.id} @${tenantA}`;
    const tenantC = `TenantRegistry ${tenant.json.id} @${tenant.json.id}`;
    const keyA = `UserRegistryApiKey ${keyInA.json.id} @${tenantA}`;
    expect(changes(landlord)).toEqual([userB, roleA, tenantC, keyA]);
    expect(changes(adminA)).toEqual([roleA, keyA]);
    expect(changes(adminB)).toEqual([userB]);
    expect(changes(rolesA)).toEqual([roleA]);
    expect(changes(plainByKey)).toEqual([]);
  });

  it('Watcher: a message reaches the streams of its tenant and the landlords; untagged or unreadable ones, landlords only', async () => {
    const landlord = await watch('landlord-b', '/api/Watcher/Stream');
    const plainA = await watch('plain-a', '/api/Watcher/Stream');
    const adminB = await watch('admin-b', '/api/Watcher/Stream');
    const all = [landlord, plainA, adminB];
    const bus = writer.app.get(Bus);
    await bus.publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: tenantA, activation: 'for A' }));
    await bus.publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: tenantB, activation: 'for B' }));
    await bus.publish(CHANNELS.watcher, JSON.stringify({ activation: 'no tenant' }));
    await bus.publish(CHANNELS.watcher, JSON.stringify({ tenantRegistryId: String(tenantA), activation: 'tenant as text' }));
    await bus.publish(CHANNELS.watcher, 'not json at all');
    await settle(all, landlord, CHANNELS.watcher);

    const activations = (w: Watcher) =>
      messages(w.stream).map((m) => (typeof m === 'object' && m !== null ? (m as { activation?: string }).activation ?? 'marker' : m));
    expect(activations(landlord)).toEqual(['for A', 'for B', 'no tenant', 'tenant as text', 'not json at all', 'marker']);
    expect(activations(plainA)).toEqual(['for A']);
    expect(activations(adminB)).toEqual(['for B']);
  });
});

describe('stream scope follows the caller (contract 13)', () => {
  let t: TestApp;
  let admin: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin } = await signInAdministrator(t));
  });
  afterAll(async () => t.close());

  it('a stream whose caller loses permission 35 stops getting user changes at the next re-check', async () => {
    const demoted = await insertUser(t, { name: 'demoted', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityUser] });
    const browser = new Browser(t.url);
    const token = (await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'demoted', password: STRONG })).json.token;
    const stream = await openStream(`${t.url}/api/ServiceChange/Stream`, { authorization: `Bearer ${token}` });
    await stream.waitFor((text) => text.startsWith(': connected'));

    const first = await insertUser(t, { name: 'first', password: STRONG, tenantName: 'Tenant A' });
    expect((await admin.put(`/api/UserRegistry/${first.id}`, { email: 'first@example.com' })).status).toBe(200);
    await stream.waitFor((text) => text.includes(`"id":${first.id}`));

    await t.db.query(`DELETE FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1`, [demoted.roleRegistryId]);
    await t.app.get(StreamRegistry).recheck();
    expect(stream.isEnded()).toBe(false);
    expect((await admin.put(`/api/UserRegistry/${first.id}`, { email: 'again@example.com' })).status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    (t.app.get(StreamRegistry) as unknown as { heartbeat(): void }).heartbeat();
    await stream.waitFor((text) => text.includes(': heartbeat'));
    expect(stream.received().split(`"id":${first.id}`).length - 1).toBe(1);
    stream.abort();
  });
});
