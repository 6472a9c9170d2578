import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { Browser } from './helpers/http';

/**
 * Without ConnectionString the service runs on the embedded PostgreSQL (PGlite behind pglite-socket)
 * under DataDirectory: the same migrations and seed, and data that survives a restart. No JwtKey is
 * given, so the generated secret kept in DataDirectory must also survive (sessions stay valid).
 */
describe('embedded PostgreSQL', () => {
  const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-embedded-'));
  const boot = async () => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error' }));
    const app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
  };

  it('seeds, signs in, and keeps data and sessions across a restart', async () => {
    const first = await boot();
    const browser = new Browser(first.url);
    const changed = await browser.post('/api/Authentication/ByUserNamePassword', {
      userName: 'Administrator',
      password: 'Administrator',
      newPassword: 'Embedded-Adm1n-Pass',
      repeatNewPassword: 'Embedded-Adm1n-Pass',
    });
    expect(changed.status).toBe(200);
    await first.app.close();

    const second = await boot();
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
        password: 'Embedded-Adm1n-Pass',
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
  });
});
