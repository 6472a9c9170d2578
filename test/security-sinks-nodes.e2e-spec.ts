import { ManualClock } from '../src/common/clock';
import { SinkDeliverer } from '../src/sinks/sink-deliverer.service';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { deliveryOrder, HttpReceiver } from './helpers/sink-receivers';
import { signInAdministrator } from './helpers/users';
import { sealAllPending } from './helpers/sealing';

/**
 * Two service nodes on one database deliver a sink one at a time (contract 19): never both at once,
 * every leaf once and in order; when the delivering node stops mid-backlog, the other takes the sink
 * over from its cursor and nothing is missing.
 */
describe('security sinks on two nodes (contract 19)', () => {
  let a: TestApp;
  let b: TestApp;
  const receiver = new HttpReceiver();
  const clock = new ManualClock(Date.now());

  beforeAll(async () => {
    a = await startTestApp({ clock });
    b = await startTestApp({ clock, db: a.db });
    await receiver.start();
  });
  let stopped: TestApp | null = null;
  afterAll(async () => {
    await receiver.stop();
    if (b && stopped !== b) await b.close();
    if (a && stopped !== a) await a.close();
    else if (a) await a.db.drop();
  });

  it('one deliverer at a time; the other node takes over when it stops; every leaf in order', async () => {
    const { browser } = await signInAdministrator(a);
    const sealAll = () => sealAllPending(a.app);
    await a.db.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed") SELECT 'n' || g, 1, false FROM generate_series(1, 6000) g`);
    await sealAll();
    receiver.delayMs = 150;
    const created = await browser.post('/api/SecuritySink', { name: 'shared', type: 'webhook', url: receiver.url, format: 'ocsf', secret: 'shared-secret-0123456789', active: true, startLeafIndex: 0 });
    expect(created.status).toBe(201);
    const id = created.json.id as number;
    const deliverers = () => [a, b].filter((node) => node.app.get(SinkDeliverer).delivering().includes(id));
    await Promise.all([a.app.get(SinkDeliverer).claim(), b.app.get(SinkDeliverer).claim()]);

    // While it flows, never two deliverers; then stop the one delivering.
    await eventually(() => receiver.batches.length >= 3);
    for (let i = 0; i < 10; i++) {
      expect(deliverers().length).toBeLessThanOrEqual(1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [first] = deliverers();
    expect(first).toBeDefined();
    const other = first === a ? b : a;
    const before = receiver.batches.length;
    stopped = first;
    await first.app.close();
    await eventually(() => other.app.get(SinkDeliverer).delivering().includes(id), 30_000);
    receiver.delayMs = 0;
    const [{ size }] = await other.db.query<{ size: number }>(`SELECT max("TreeSize")::int AS size FROM "AuditCheckpoint"`);
    await eventually(async () => {
      const [row] = await other.db.query<{ next: number }>(`SELECT "NextLeafIndex"::int AS next FROM "SecuritySink" WHERE "Id" = $1`, [id]);
      return row.next >= size;
    }, 60_000);
    expect(receiver.batches.length).toBeGreaterThan(before);
    const received = receiver.leafIndexes();
    expect(deliveryOrder(received, 0).jumps).toEqual([]);
    expect(new Set(received).size).toBe(size);
    // At most the batch in flight when the node stopped came twice.
    expect(received.length - size).toBeLessThanOrEqual(500);
  }, 180_000);
});
