import { Bus, CHANNELS } from '../src/bus/bus';
import { StreamRegistry } from '../src/streams/stream-registry.service';
import { startTestApp, TestApp } from './helpers/app';
import { createKey } from './helpers/api-keys';
import { Browser } from './helpers/http';
import { openStream } from './helpers/streams';
import { insertUser, signInAdministrator } from './helpers/users';

const STRONG = 'Corr3ct-Horse-Battery';

describe('streams (contract 11)', () => {
  let t: TestApp;
  let admin: Browser;
  let registry: StreamRegistry;
  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin } = await signInAdministrator(t));
    registry = t.app.get(StreamRegistry);
  });
  afterAll(async () => t.close());

  const cookieOf = (browser: Browser) => [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');

  async function signIn(
    name: string,
    extra: Parameters<typeof insertUser>[1] = { name },
  ): Promise<{ browser: Browser; id: number; tenantRegistryId: number }> {
    const user = await insertUser(t, { password: STRONG, ...extra, name });
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG })).status).toBe(200);
    t.clock.advance(1000);
    return { browser, id: user.id, tenantRegistryId: user.tenantRegistryId };
  }
  /** A Watcher message for the streams of one tenant (contract 13: untagged ones reach landlords only). */
  const forTenant = (tenantRegistryId: number, text: string) => JSON.stringify({ tenantRegistryId, text });

  const watch = (headers: Record<string, string>, path = '/api/Watcher/Stream') => openStream(`${t.url}${path}`, headers);

  it('relays the Watcher and ServiceChange channels as text/event-stream, with comment heartbeats', async () => {
    // A landlord: it may read every registry change, and every Watcher message.
    const { browser } = await signIn('watcher', { name: 'watcher', landlord: true });
    const watcher = await watch({ cookie: cookieOf(browser) });
    const changes = await watch({ cookie: cookieOf(browser) }, '/api/ServiceChange/Stream');
    expect(watcher.status).toBe(200);
    expect(watcher.contentType).toMatch(/^text\/event-stream/);
    await watcher.waitFor((text) => text.startsWith(':'));

    await t.app.get(Bus).publish(CHANNELS.watcher, '{"activation":1}\nsecond line');
    await watcher.waitFor((text) => text.includes('data: {"activation":1}\ndata: second line\n\n'));

    // A registry change (an API key created) arrives on ServiceChange only.
    const user = await insertUser(t, { name: 'changed', password: STRONG });
    await createKey(t, admin, user.id);
    const text = await changes.waitFor((received) => received.includes('UserRegistryApiKey'));
    const data = text.split('\n').find((line) => line.includes('UserRegistryApiKey'))!;
    expect(JSON.parse(data.slice('data: '.length))).toMatchObject({ entity: 'UserRegistryApiKey', action: 'created' });
    expect(watcher.received()).not.toContain('UserRegistryApiKey');

    (registry as unknown as { heartbeat(): void }).heartbeat();
    await watcher.waitFor((received) => received.includes(': heartbeat\n\n'));
    watcher.abort();
    changes.abort();
  });

  it('refuses an anonymous caller', async () => {
    const res = await fetch(`${t.url}/api/Watcher/Stream`);
    expect(res.status).toBe(401);
    expect((await fetch(`${t.url}/api/ServiceChange/Stream`)).status).toBe(401);
  });

  it('closes the user\'s streams at logout, and only theirs', async () => {
    const leaving = await signIn('stream-leaving');
    const staying = await signIn('stream-staying');
    const a = await watch({ cookie: cookieOf(leaving.browser) });
    const b = await watch({ cookie: cookieOf(leaving.browser) }, '/api/ServiceChange/Stream');
    const other = await watch({ cookie: cookieOf(staying.browser) });
    await Promise.all([a, b, other].map((s) => s.waitFor((text) => text.length > 0)));
    expect((await leaving.browser.post('/api/Authentication/Logout')).status).toBe(200);
    await a.ended;
    await b.ended;
    await t.app.get(Bus).publish(CHANNELS.watcher, forTenant(staying.tenantRegistryId, 'still here'));
    await other.waitFor((text) => text.includes('still here'));
    expect(other.isEnded()).toBe(false);
    other.abort();
  });

  it('closes at once on RevokeTokens; at the re-check on deactivation, TokensValidFrom and the absolute lifetime', async () => {
    const revoked = await signIn('stream-revoked');
    const s1 = await watch({ cookie: cookieOf(revoked.browser) });
    await s1.waitFor((text) => text.length > 0);
    expect((await admin.post(`/api/UserRegistry/RevokeTokens/${revoked.id}`)).status).toBe(204);
    await s1.ended;

    const deactivated = await signIn('stream-deactivated');
    const validFrom = await signIn('stream-valid-from');
    const aged = await signIn('stream-aged');
    const s2 = await watch({ cookie: cookieOf(deactivated.browser) });
    const s3 = await watch({ cookie: cookieOf(validFrom.browser) });
    const s4 = await watch({ cookie: cookieOf(aged.browser) });
    await Promise.all([s2, s3, s4].map((s) => s.waitFor((text) => text.length > 0)));
    await registry.recheck();
    expect([s2, s3, s4].map((s) => s.isEnded())).toEqual([false, false, false]);

    await t.db.query(`UPDATE "UserRegistry" SET "Active" = false WHERE "Id" = $1`, [deactivated.id]);
    await t.db.query(`UPDATE "UserRegistry" SET "TokensValidFrom" = $2 WHERE "Id" = $1`, [validFrom.id, t.clock.now()]);
    await registry.recheck();
    await s2.ended;
    await s3.ended;
    expect(s4.isEnded()).toBe(false);

    t.clock.advance(t.settings.sessionAbsoluteLifetimeMs);
    await registry.recheck();
    await s4.ended;
  });

  it('an API-key stream outlives logout and RevokeTokens of its user, and ends with its key or its user', async () => {
    ({ browser: admin } = await signInAdministrator(t)); // the previous test aged every session
    const { browser, id, tenantRegistryId } = await signIn('stream-key');
    const key = await createKey(t, admin, id);
    const other = await createKey(t, admin, id);
    const byKey = await watch({ 'x-api-key': key.apiKey });
    const byOtherKey = await watch({ 'x-api-key': other.apiKey });
    expect(byKey.status).toBe(200);
    await Promise.all([byKey, byOtherKey].map((s) => s.waitFor((text) => text.length > 0)));
    expect((await browser.post('/api/Authentication/Logout')).status).toBe(200);
    expect((await admin.post(`/api/UserRegistry/RevokeTokens/${id}`)).status).toBe(204);
    t.clock.advance(t.settings.sessionAbsoluteLifetimeMs);
    await registry.recheck();
    ({ browser: admin } = await signInAdministrator(t));
    await t.app.get(Bus).publish(CHANNELS.watcher, forTenant(tenantRegistryId, 'for keys'));
    await byKey.waitFor((text) => text.includes('for keys'));
    expect(byKey.isEnded()).toBe(false);

    expect((await admin.delete(`/api/UserRegistry/${id}/ApiKey/${key.id}`)).status).toBe(204);
    await byKey.ended;
    expect(byOtherKey.isEnded()).toBe(false);

    await t.db.query(`UPDATE "UserRegistry" SET "PasswordLocked" = true WHERE "Id" = $1`, [id]);
    await registry.recheck();
    await byOtherKey.ended;
  });
});
