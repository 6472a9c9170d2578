import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../src/common/clock';
import { addPeriods, partitionName, periodStart, PARTITIONED_TELEMETRY_TABLES } from '../src/retention/partition-plan';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { ServiceProcess, startServiceProcess } from './helpers/service-process';

const DAY = 86_400_000;

/**
 * Issue 33: housekeeping that no request needs starts once the server listens instead of before
 * (docs/decisions/0026, "Listening early"). What a caller sees must not change: every request that
 * arrives the moment `listening on` is written gets its ordinary answer, and the housekeeping still
 * runs.
 */
describe('listening early (issue 33)', () => {
  describe('the embedded default, as a separate process', () => {
    let service: ServiceProcess | undefined;
    afterEach(async () => {
      await service?.stop();
      service = undefined;
    });

    /** The requests a person or a probe sends at once, all in flight together. */
    async function atOnce(url: string, password: { old: string; next?: string }) {
      const browser = new Browser(url);
      const [ready, signIn, unknown, page] = await Promise.all([
        browser.get('/health/ready'),
        browser.post('/api/Authentication/ByUserNamePassword', {
          userName: 'Administrator',
          password: password.old,
          ...(password.next ? { newPassword: password.next, repeatNewPassword: password.next } : {}),
        }),
        new Browser(url).post('/api/Authentication/ByUserNamePassword', { userName: 'Nobody-Here', password: 'Not-The-Passw0rd!' }),
        new Browser(url).get('/Account/Login'),
      ]);
      return { ready, signIn, unknown, page };
    }

    it('answers requests sent the moment it says it listens, on the first start and on a restart', async () => {
      const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-listening-early-'));
      const env = { DataDirectory: dataDirectory, Port: '0', BindAddress: '127.0.0.1' };

      service = startServiceProcess(env);
      let [, url] = await service.waitFor(/listening on (http:\S+)/);
      const first = await atOnce(url, { old: 'Administrator', next: 'Early-Adm1n-Password' });
      expect(first.ready.status).toBe(200);
      expect(first.ready.json).toEqual({ status: 'ready' });
      // The administrator was seeded before the line: the first sign-in (with its new password) succeeds.
      expect(first.signIn.status).toBe(200);
      expect(typeof first.signIn.json.token).toBe('string');
      // An unknown user is refused as always (the dummy hash is made by then or waited for), never a 500.
      expect(first.unknown.status).toBe(401);
      expect(first.page.status).toBe(200);
      expect(await service.stop()).toBe(0);

      // The restart: no seeding, the same answers.
      service = startServiceProcess(env);
      [, url] = await service.waitFor(/listening on (http:\S+)/);
      const again = await atOnce(url, { old: 'Early-Adm1n-Password' });
      expect(again.ready.status).toBe(200);
      expect(again.signIn.status).toBe(200);
      expect(typeof again.signIn.json.token).toBe('string');
      expect(again.unknown.status).toBe(401);
      expect(again.page.status).toBe(200);
      const session = await new Browser(url).get('/api/Authentication/Session', { authorization: `Bearer ${again.signIn.json.token as string}` });
      expect(session.status).toBe(200);
      expect(await service.stop()).toBe(0);
      expect(service.stdout() + service.stderr()).not.toMatch(/\bERROR\b|failed to start/);
    }, 600_000);
  });

  describe('the housekeeping after listening', () => {
    let t: TestApp;
    // A day far ahead of every partition made so far: the start-time run has to make its partitions.
    const later = periodStart('day', new Date(Date.now() + 400 * DAY));

    beforeAll(async () => {
      t = await startTestApp({ clock: new ManualClock(later.getTime() + 12 * 3_600_000) });
    }, 120_000);
    afterAll(async () => {
      await t?.close();
    });

    it('still makes the partitions ahead at start, once the server listens', async () => {
      const expected = PARTITIONED_TELEMETRY_TABLES.flatMap((table) => [0, 1, 2].map((i) => partitionName(table, addPeriods('day', later, i))));
      const existing = async () =>
        new Set(
          (await t.db.query<{ name: string }>(`SELECT relname AS name FROM pg_class WHERE relname = ANY($1::text[])`, [expected])).map((r) => r.name),
        );
      // Polled: the run starts when the server listens and no request waits for it.
      await eventually(async () => (await existing()).size === expected.length, 60_000);
      expect([...(await existing())].sort()).toEqual([...expected].sort());
    });
  });
});
