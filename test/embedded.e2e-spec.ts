import type { NestExpressApplication } from '@nestjs/platform-express';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, ClientConfig, Pool } from 'pg';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { EMBEDDED_POSTGRES } from '../src/database/database.module';
import type { EmbeddedPostgres } from '../src/database/embedded';
import { Browser } from './helpers/http';
import { firstAdministratorSignIn } from './helpers/users';

const ADMIN_PASSWORD = 'Embedded-Adm1n-Pass';
const ANALYST_PASSWORD = 'Embedded-Analyst-Pass1';

/** Waits for a condition with a deadline generous enough for a loaded machine. */
async function waitUntil(what: string, condition: () => boolean, deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Without ConnectionString the service runs on the embedded PostgreSQL (PGlite, served in-process to
 * the pg pool) under DataDirectory: the same migrations and seed, and data that survives a restart.
 * No JwtKey is given, so the generated secret kept in DataDirectory must also survive (sessions stay
 * valid).
 */
describe('embedded PostgreSQL', () => {
  const boot = async (dataDirectory: string, env: Record<string, string> = {}) => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error', ...env }));
    const app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
  };

  it('seeds, signs in, and keeps data and sessions across a restart', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-embedded-'));
    const first = await boot(dataDirectory);
    const browser = new Browser(first.url);
    const changed = await firstAdministratorSignIn(browser, ADMIN_PASSWORD);
    expect(changed.status).toBe(200);
    await first.app.close();

    const second = await boot(dataDirectory);
    try {
      const again = new Browser(second.url);
      again.cookies.set('authentication-jwt', browser.cookies.get('authentication-jwt')!);
      const session = await again.get('/api/Authentication/Session');
      expect(session.status).toBe(200);
      expect(session.json).toMatchObject({ userName: 'Administrator', landlord: true, tenantName: 'Landlord' });
      const old = await new Browser(second.url).post('/api/Authentication/ByUserNamePassword', {
        userName: 'Administrator',
        password: 'Administrator',
      });
      expect(old.status).toBe(401);
      const fresh = await new Browser(second.url).post('/api/Authentication/ByUserNamePassword', {
        userName: 'Administrator',
        password: ADMIN_PASSWORD,
      });
      expect(fresh.status).toBe(200);

      // Grid reads stream from a binary COPY here too (PGlite serves every connection from one session).
      const reader = new Browser(second.url);
      const headers = { authorization: `Bearer ${fresh.json.token}` };
      const json = await reader.get('/api/UserLogin?sortField=id&sortDirection=asc', headers);
      const csv = await reader.get('/api/UserLogin?format=csv&sortField=id&sortDirection=asc', headers);
      expect(json.status).toBe(200);
      expect(Object.keys(json.json)).toEqual(['statistics', 'total', 'rows']);
      expect(json.json.total).toBe(json.json.rows.length);
      expect(json.json.rows.map((r: { failed: boolean }) => r.failed)).toEqual([false, true, false]);
      expect(csv.status).toBe(200);
      expect(csv.text.trim().split('\r\n')).toHaveLength(json.json.total + 1);
    } finally {
      await second.app.close();
    }
  }, 180_000);

  /**
   * The pool's connections all share PGlite's one session. Before the bridge gave each connection
   * its own statement names, the first request on a connection opened after an idle close (or
   * beside another one) answered 503: `prepared statement "tm-user-state" already exists`.
   */
  describe('after idle and with connections cut', () => {
    let app: NestExpressApplication;
    let url: string;
    let pool: Pool;
    let embedded: EmbeddedPostgres;
    let adminToken: string;
    let adminCookies: Browser;
    let analystToken: string;
    let analystCookies: Browser;

    beforeAll(async () => {
      ({ app, url } = await boot(mkdtempSync(join(tmpdir(), 'tm-embedded-idle-')), { DatabasePoolIdleTimeoutMilliseconds: '200' }));
      pool = (app.get(DataSource).driver as unknown as { master: Pool }).master;
      embedded = app.get<EmbeddedPostgres>(EMBEDDED_POSTGRES);

      adminCookies = new Browser(url);
      const admin = await firstAdministratorSignIn(adminCookies, ADMIN_PASSWORD);
      expect(admin.status).toBe(200);
      adminToken = admin.json.token;

      const role = await adminCookies.post('/api/RoleRegistry', { name: 'Embedded Analysts', permissions: [], active: true });
      expect(role.status).toBe(201);
      const user = await adminCookies.post('/api/UserRegistry', {
        name: 'embedded-analyst',
        roleRegistryId: role.json.id,
        active: true,
        password: ANALYST_PASSWORD,
      });
      expect(user.status).toBe(201);
      analystCookies = new Browser(url);
      const analyst = await analystCookies.post('/api/Authentication/ByUserNamePassword', {
        userName: 'embedded-analyst',
        password: ANALYST_PASSWORD,
      });
      expect(analyst.status).toBe(200);
      analystToken = analyst.json.token;
    }, 180_000);

    afterAll(async () => {
      await app?.close();
    });

    const bearer = (token: string) => new Browser(url, {}).get('/api/Authentication/Session', { authorization: `Bearer ${token}` });

    /** Every kind of signed-in request, one after the other and then all at once; each must be 200 and name its own user. */
    async function everyRequestAnswers(): Promise<void> {
      const kinds: [string, () => ReturnType<Browser['get']>][] = [
        ['Administrator', () => bearer(adminToken)],
        ['Administrator', () => adminCookies.get('/api/Authentication/Session')],
        ['embedded-analyst', () => bearer(analystToken)],
        ['embedded-analyst', () => analystCookies.get('/api/Authentication/Session')],
      ];
      for (const [userName, send] of kinds) {
        const res = await send();
        expect({ status: res.status, userName: res.json?.userName }).toEqual({ status: 200, userName });
      }
      const all = Array.from({ length: 40 }, (_, i) => kinds[i % kinds.length]);
      const answers = await Promise.all(all.map(([, send]) => send()));
      expect(answers.map((res) => [res.status, res.json?.userName])).toEqual(all.map(([userName]) => [200, userName]));
    }

    it('answers every request after the pool closed its idle connections', async () => {
      await everyRequestAnswers();
      // Let the pool close every connection (idle timeout 200 ms), then come back.
      await waitUntil('the pool closed its idle connections', () => pool.totalCount === 0 && embedded.connections === 0);
      await everyRequestAnswers();
      await waitUntil('the pool closed its idle connections again', () => pool.totalCount === 0 && embedded.connections === 0);
      await everyRequestAnswers();
    });

    it('answers every request after the pool connections were destroyed under it', async () => {
      await everyRequestAnswers();
      expect(pool.totalCount).toBeGreaterThan(0);
      const clients = (pool as unknown as { _clients: { connection: { stream: { destroy(): void } } }[] })._clients;
      for (const client of [...clients]) client.connection.stream.destroy();
      await waitUntil('the pool dropped the destroyed connections', () => pool.totalCount === 0);
      await everyRequestAnswers();
    });

    it('closes a connection that sends a malformed message, in the middle of a transaction, and rolls it back', async () => {
      const raw = new Client({ connectionString: embedded.connectionString, stream: embedded.stream } as ClientConfig);
      await raw.connect();
      raw.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => raw.once('end', () => resolve()));
      await raw.query('BEGIN');
      await raw.query(`UPDATE "UserRegistry" SET "Active" = false WHERE "Name" = 'embedded-analyst'`);
      // A message whose length field is impossible (2 < 4).
      (raw as unknown as { connection: { stream: { write(b: Buffer): void } } }).connection.stream.write(Buffer.from([0x51, 0, 0, 0, 2]));
      await closed;
      // The deactivation was never committed: the analyst still works, and so does everyone else.
      await everyRequestAnswers();
    });

    it('answers every request after the database side cut every connection', async () => {
      await everyRequestAnswers();
      expect(embedded.connections).toBeGreaterThan(0);
      embedded.disconnectAll();
      await waitUntil('the pool dropped the cut connections', () => pool.totalCount === 0 && embedded.connections === 0);
      await everyRequestAnswers();
    });
  });
});
