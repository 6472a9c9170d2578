import { connect, Socket } from 'node:net';
import { Bus, CHANNELS } from '../src/bus/bus';
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../src/bootstrap';
import { StreamRegistry } from '../src/streams/stream-registry.service';
import { startTestApp, TestApp } from './helpers/app';
import { RawRequest } from './helpers/raw-http';
import { insertUser } from './helpers/users';
import { Permission } from '../src/access/permissions';

/**
 * Contract 13, slow clients, on the routes the first tests did not stall: the Server-Sent Events
 * streams (Watcher, ServiceChange) with clients that stop reading while messages keep coming, and
 * clients that send their request slowly (slowloris on the headers and on the body). The service
 * cuts a stream whose client has left too much unread instead of buffering every later message for
 * it, bounds how long a request may take to arrive, and ordinary requests keep answering throughout.
 */
const STRONG = 'Corr3ct-Horse-Battery';

describe('stalled and slow clients (contract 13)', () => {
  let t: TestApp;
  let token: string;
  let tenantRegistryId: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    ({ tenantRegistryId } = await insertUser(t, { name: 'reader', password: STRONG, permissions: [Permission.ReadWriteSecurityUser] }));
    const res = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'reader', password: STRONG }),
    });
    token = ((await res.json()) as { token: string }).token;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await t.close();
  });

  const ordinary = async () => (await fetch(`${t.url}/api/Authentication/Session`, { headers: { authorization: `Bearer ${token}` } })).status;

  it.each(['/api/Watcher/Stream', '/api/ServiceChange/Stream'])(
    '%s: streams whose clients stop reading are cut once they leave too much unread; the others and ordinary requests go on',
    async (path) => {
      const registry = t.app.get(StreamRegistry);
      // The streams of the case before have gone (their clients closed them).
      while (registry.count > 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const before = registry.count;
      const stalled = Array.from({ length: 3 }, () => new RawRequest(t.url, path, { authorization: `Bearer ${token}` }));
      const reading = new RawRequest(t.url, path, { authorization: `Bearer ${token}` });
      await Promise.all([...stalled, reading].map((r) => r.atLeast(20)));
      expect(registry.count).toBe(before + 4);
      for (const r of stalled) r.pause();

      const channel = path.startsWith('/api/Watcher') ? CHANNELS.watcher : CHANNELS.serviceChange;
      const payload = 'x'.repeat(16_000);
      const bus = t.app.get(Bus);
      let sent = 0;
      while (registry.count > before + 1 && sent < 2000) {
        // A message every stream of this tenant may read (a user change, for ServiceChange).
        const message = channel === CHANNELS.watcher ? { tenantRegistryId, payload } : { entity: 'UserRegistry', id: 0, action: 'updated', tenantRegistryId, payload };
        await bus.publish(channel, JSON.stringify(message));
        sent++;
        if (sent % 50 === 0) {
          expect(await ordinary()).toBe(200);
          await reading.atLeast(sent * 16_000);
        }
      }
      expect(registry.count).toBe(before + 1);
      expect(await ordinary()).toBe(200);
      // Once they read again, the stalled clients find their connection closed; the reading one is open.
      for (const r of stalled) {
        r.resume();
        await r.closedByServer();
      }
      expect(reading.isClosed).toBe(false);
      reading.destroy();
    },
  );

  it('bounds how long a request may take to arrive (headers, then the whole request)', () => {
    const server = t.app.getHttpServer() as import('node:http').Server;
    expect(server.headersTimeout).toBe(HEADERS_TIMEOUT_MS);
    expect(server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(HEADERS_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
    expect(REQUEST_TIMEOUT_MS).toBeLessThanOrEqual(30_000);
  });

  it('slowloris: 100 connections trickling their headers or their body do not keep ordinary requests from answering', async () => {
    const { port } = new URL(t.url);
    for (let i = 0; i < 100; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      sockets.push(socket);
      if (i % 2 === 0) socket.write(`GET /api/Authentication/Session HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-${i}: `);
      else
        socket.write(
          `POST /api/Authentication/ByUserNamePassword HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 30000\r\n\r\n{"userName":"`,
        );
    }
    for (let round = 0; round < 5; round++) {
      for (const socket of sockets) socket.write('a');
      expect(await ordinary()).toBe(200);
      const signIn = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userName: 'reader', password: STRONG }),
      });
      expect(signIn.status).toBe(200);
    }
  });

  it('a body larger than the limit is refused (413) without reading it all, never a 5xx', async () => {
    const res = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'reader', password: 'x'.repeat(5 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
  });
});
