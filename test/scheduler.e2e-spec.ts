import { SchedulerRegistry } from '@nestjs/schedule';
import { createHash, randomUUID } from 'node:crypto';
import { ActiveApiKeys } from '../src/api-keys/active-api-keys';
import { CaptureQueues } from '../src/telemetry/capture-queues.service';
import { ArchiverStage } from '../src/telemetry/telemetry.types';
import { startTestApp, TestApp } from './helpers/app';
import { createKey, sessionWithApiKey } from './helpers/api-keys';
import { insertUser, signInAdministrator } from './helpers/users';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The background work runs as named jobs of Nest's scheduler registry: once a minute, on the minute,
 * for the capture flush, the API-key set reload and the API-key usage write (cron); the stream
 * heartbeat and re-check, the session activity write, the sign-in throttle purge, the audit retry and
 * (with Redis) the Redis heartbeat as named intervals.
 * Each job is fired here by hand and must do its one service call.
 */
describe('scheduled jobs', () => {
  let t: TestApp;
  let registry: SchedulerRegistry;
  beforeAll(async () => {
    t = await startTestApp({ cronJobs: true, env: { Instance: 'sched-node' } });
    registry = t.app.get(SchedulerRegistry);
  });
  afterAll(async () => t.close());

  it('registers the three minute jobs as cron on the minute, and the other work as named intervals', () => {
    const cron = registry.getCronJobs();
    for (const name of ['capture-flush', 'api-key-set-reload', 'api-key-usage-write']) {
      const job = cron.get(name);
      expect(job).toBeDefined();
      expect(job!.isActive).toBe(true);
      // Next run: second 0 of a minute, less than a minute away.
      const next = job!.nextDate().toJSDate();
      expect(next.getUTCSeconds()).toBe(0);
      expect(next.getUTCMilliseconds()).toBe(0);
      expect(next.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    }
    expect(registry.getIntervals().sort()).toEqual(
      expect.arrayContaining(['session-activity-write', 'stream-heartbeat', 'stream-recheck', 'sign-in-throttle-purge', 'anonymous-logout-purge', 'audit-retry', 'audit-seal']),
    );
  });

  it('lists the Redis connections\' heartbeat as a named interval when Redis is configured', async () => {
    const withRedis = await startTestApp({ env: { RedisConnectionString: 'redis://127.0.0.1:6379' } });
    try {
      expect(withRedis.app.get(SchedulerRegistry).getIntervals()).toContain('redis-heartbeat');
      expect(registry.getIntervals()).not.toContain('redis-heartbeat');
    } finally {
      await withRedis.close();
    }
  });

  describe('each job fired by hand (the real ones stopped, so a minute boundary cannot interleave)', () => {
    beforeAll(async () => {
      for (const job of registry.getCronJobs().values()) await job.stop();
    });

    it('capture-flush writes what the queues hold', async () => {
      const occurredDate = t.clock.now();
      const entry = randomUUID();
      t.app.get(CaptureQueues).archiverWarnings.enqueue({
        occurredDate,
        modelGuid: randomUUID(),
        modelName: 'Scheduled',
        entryGuid: entry,
        stageId: ArchiverStage.BuildArchiveJson,
        durationMicroseconds: 123_456,
      });
      // A flush of its own instant, told apart from any the real job may have run before it was stopped.
      t.clock.advance(1_000);
      await registry.getCronJob('capture-flush').fireOnTick();
      const rows = await t.db.query<Record<string, unknown>>(
        `SELECT "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "Instance" FROM "ArchiverWarning" WHERE "EntityAnalysisModelInstanceEntryGuid" = $1`,
        [entry],
      );
      expect(rows).toEqual([{ EntityAnalysisModelName: 'Scheduled', StageId: ArchiverStage.BuildArchiveJson, DurationMicroseconds: '123456', Instance: 'sched-node' }]);
      const health = await t.db.query<{ QueueId: number }>(`SELECT "QueueId" FROM "CaptureQueueHealth" WHERE "CreatedDate" = $1 ORDER BY 1`, [t.clock.now()]);
      expect(health.map((h) => h.QueueId)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('api-key-usage-write records the key use noted on the request path', async () => {
      const { browser: admin } = await signInAdministrator(t);
      const user = await insertUser(t, { name: 'scheduled-key-user', password: 'Corr3ct-Horse-Battery' });
      const key = await createKey(t, admin, user.id);
      const usedAt = t.clock.nowMs();
      expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
      await registry.getCronJob('api-key-usage-write').fireOnTick();
      const [row] = await t.db.query<{ LastUsedDate: Date }>(`SELECT "LastUsedDate" FROM "UserRegistryApiKey" WHERE "Id" = $1`, [key.id]);
      expect(row.LastUsedDate.getTime()).toBe(usedAt);
    });

    it('api-key-set-reload drops a key revoked in the database behind this node', async () => {
      const { browser: admin } = await signInAdministrator(t);
      const user = await insertUser(t, { name: 'scheduled-reload-user', password: 'Corr3ct-Horse-Battery' });
      const key = await createKey(t, admin, user.id);
      const active = t.app.get(ActiveApiKeys);
      expect(active.has(sha256(key.apiKey))).toBe(true);
      await t.db.query(`UPDATE "UserRegistryApiKey" SET "Deleted" = true WHERE "Id" = $1`, [key.id]);
      expect(active.has(sha256(key.apiKey))).toBe(true);
      await registry.getCronJob('api-key-set-reload').fireOnTick();
      expect(active.has(sha256(key.apiKey))).toBe(false);
    });
  });
});
