import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { SinkDeliverer } from '../src/sinks/sink-deliverer.service';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { CapturedLogs } from './helpers/logs';
import { HttpReceiver } from './helpers/sink-receivers';
import { signInAdministrator } from './helpers/users';

const DAY = 86_400_000;

/**
 * Retention waits for sinks (contract 19 over contract 16): an audit partition past retention is not
 * dropped while an active sink has not acknowledged its leaves; the run says so in its log, and the
 * partition goes at the first run after the sink caught up. A paused sink does not hold it.
 */
describe('retention waits for sinks (contract 19)', () => {
  let t: TestApp;
  const logs = new CapturedLogs();
  const receiver = new HttpReceiver();
  const start = Date.UTC(2026, 10, 25, 12, 0, 0);

  beforeAll(async () => {
    t = await startTestApp({ logger: logs, env: { AuditRetention: 'd/365' } });
    t.clock.set(start);
    await receiver.start();
  }, 120_000);
  afterAll(async () => {
    await receiver.stop();
    await t?.close();
  });

  it('keeps the expired partition while an active sink owes its leaves, says so, and drops it once acknowledged', async () => {
    const maintenance = t.app.get(PartitionMaintenance);
    await maintenance.applyRetention();
    const { browser } = await signInAdministrator(t);
    receiver.mode = 'error500';
    const sink = await browser.post('/api/SecuritySink', { name: 'owed', type: 'webhook', url: receiver.url, format: 'ocsf', secret: 'retention-secret-0123', active: true, startLeafIndex: 0 });
    expect(sink.status).toBe(201);
    const paused = await browser.post('/api/SecuritySink', { name: 'paused', type: 'webhook', url: receiver.url, format: 'ocsf', secret: 'retention-secret-0123', active: false, startLeafIndex: 0 });
    expect(paused.status).toBe(201);

    await t.db.query(`INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, 'planted-old', 1, false)`, [new Date(start - 400 * DAY)]);
    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditPending"`);
      return n === 0;
    });

    // This run moves the row out of DEFAULT into its month, finds that month past retention, and keeps it.
    const held = await maintenance.applyRetention();
    const [{ partition }] = await t.db.query<{ partition: string }>(`SELECT tableoid::regclass::text AS partition FROM "UserLogin" WHERE "CreatedUser" = 'planted-old'`);
    const oldPartition = partition.replace(/"/g, '');
    expect(held.dropped).not.toContain(oldPartition);
    expect(held.heldForSinks).toEqual([{ partition: oldPartition, lastLeafIndex: expect.any(Number), sinks: [{ name: 'owed', nextLeafIndex: 0 }] }]);
    expect(logs.count('warn', new RegExp(`^partition ${oldPartition} is past retention but kept: security sinks "owed" \\(next leaf 0\\) have not acknowledged its leaves up to \\d+; dropped once they have$`))).toBe(1);
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "UserLogin" WHERE "CreatedUser" = 'planted-old'`);
    expect(n).toBe(1);

    // The receiver answers: once the sink is past the partition's leaves, the next run drops it.
    receiver.mode = 'ok';
    await t.app.get(SinkDeliverer).claim();
    t.clock.advance(2_000);
    await eventually(async () => {
      const [row] = await t.db.query<{ next: number }>(`SELECT "NextLeafIndex"::int AS next FROM "SecuritySink" WHERE "Name" = 'owed'`);
      return row.next > held.heldForSinks[0].lastLeafIndex;
    });
    const dropped = await maintenance.applyRetention();
    expect(dropped.dropped).toContain(oldPartition);
    expect(dropped.heldForSinks).toEqual([]);
    const [{ gone }] = await t.db.query<{ gone: number }>(`SELECT count(*)::int AS gone FROM "UserLogin" WHERE "CreatedUser" = 'planted-old'`);
    expect(gone).toBe(0);
  }, 180_000);
});
