import type { LoggerService } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { SchedulerRegistry } from '@nestjs/schedule';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../src/bootstrap';
import { ManualClock } from '../../src/common/clock';
import { AppSettings } from '../../src/config/config.module';
import { resolveSecrets } from '../../src/config/secrets';
import { loadSettings } from '../../src/config/settings';
import { createTestDatabase, TestDatabase } from './database';

export const TEST_JWT_KEY = 'test-jwt-key-0123456789abcdef0123456789abcdef';
export const TEST_API_HMAC_KEY = 'test-api-hmac-key-0123456789abcdef';

export interface TestApp {
  app: NestExpressApplication;
  /** Base URL, e.g. http://127.0.0.1:43211 */
  url: string;
  clock: ManualClock;
  db: TestDatabase;
  settings: AppSettings;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Environment variables, exactly as an operator would set them. */
  env?: Record<string, string>;
  /** Share a database with another node (multi-node tests). */
  db?: TestDatabase;
  /** Use the real clock instead of a ManualClock (for tests of timers). */
  realClock?: boolean;
  clock?: ManualClock;
  /** Leave the once-a-minute cron jobs running (they are stopped by default, see below). */
  cronJobs?: boolean;
  /** The application's logger (default: Nest's console logger at error and warn). */
  logger?: LoggerService;
  /** Listen on this port instead of any free one (a WebAuthn origin must be known before start). */
  port?: number;
}

/**
 * Starts the real service (same createApp as `npm start`) on a fresh PostgreSQL database with a
 * movable clock, listening on a free loopback port.
 */
export async function startTestApp(options: StartOptions = {}): Promise<TestApp> {
  const db = options.db ?? (await createTestDatabase());
  const settings = resolveSecrets(
    loadSettings({
      ConnectionString: db.url,
      JwtKey: TEST_JWT_KEY,
      ApiHmacKey: TEST_API_HMAC_KEY,
      DataDirectory: mkdtempSync(join(tmpdir(), 'tm-test-')),
      Port: '0',
      BindAddress: '127.0.0.1',
      LogLevel: 'error',
      // Every test signs in from 127.0.0.1, many failing on purpose; the throttle's own tests
      // (test/sign-in-throttle.e2e-spec.ts) turn it on with the value they exercise.
      SignInThrottle: '0',
      // Test files (and other runs) share one Redis: each deployment, i.e. each database, gets its own
      // channels, so a logout of user 1 in one file never closes a stream of user 1 in another.
      RedisChannelPrefix: `${db.name}:`,
      ...options.env,
    }),
  );
  const clock = options.clock ?? new ManualClock(Date.now());
  const app = await createApp(settings, { clock: options.realClock ? undefined : clock, logger: options.logger ?? ['error', 'warn'] });
  await app.listen(options.port ?? 0, '127.0.0.1');
  // The once-a-minute cron jobs run on the real clock, on the minute, and would land in the middle of a
  // test; tests call the services those jobs call at the moments they choose (the jobs' own wiring is
  // tested in test/scheduler.e2e-spec.ts, which keeps them).
  if (!options.cronJobs) for (const job of app.get(SchedulerRegistry).getCronJobs().values()) await job.stop();
  const address = app.getHttpServer().address() as { port: number };
  const url = `http://127.0.0.1:${address.port}`;
  return {
    app,
    url,
    clock,
    db,
    settings,
    async close() {
      await app.close();
      if (!options.db) await db.drop();
    },
  };
}
