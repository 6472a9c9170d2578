import { createHash } from 'node:crypto';
import { KEY_OWNER_STATE_TTL_MS } from '../src/api-keys/active-api-key.validator';
import { ApiKeyUsageWriter } from '../src/api-keys/api-key-usage.writer';
import { ActiveApiKeys } from '../src/api-keys/active-api-keys';
import { UserRegistryApiKeyRepository } from '../src/api-keys/user-registry-api-key.repository';
import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies, checksumOf, createKey, encodeKey, flipChar, keyFields, sessionWithApiKey } from './helpers/api-keys';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('API keys (contract 5)', () => {
  let t: TestApp;
  let admin: Browser;
  let adminToken: string;
  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token: adminToken } = await signInAdministrator(t));
  });
  afterAll(async () => t.close());

  it('creates a key: 201 with the clear value once; only its SHA-256 and display are stored', async () => {
    const user = await insertUser(t, { name: 'integrator:1%', password: STRONG });
    const res = await admin.post(`/api/UserRegistry/${user.id}/ApiKey`, { name: 'Billing', description: 'nightly batch' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.json).sort()).toEqual(['apiKey', 'apiKeyDisplay', 'createdDate', 'description', 'id', 'name']);
    const { apiKey, apiKeyDisplay, id } = res.json;
    expect(res.json).toMatchObject({ name: 'Billing', description: 'nightly batch' });
    expect(new Date(res.json.createdDate).getTime()).toBe(t.clock.nowMs());
    expect(apiKey).toMatch(/^[0-9A-Za-z]+$/);
    expect(apiKeyDisplay).toBe(apiKey.slice(0, 8));

    // The format, read independently: 32-byte base62 secret, version 1, escaped name, HMAC checksum.
    const fields = keyFields(apiKey);
    expect(fields.version).toBe('1');
    expect(fields.userName).toBe('integrator:1%');
    expect(fields.body).toContain('integrator%3A1%25');
    expect(fields.secret).toMatch(/^[0-9A-Za-z]{40,44}$/);
    expect(fields.checksum).toBe(checksumOf(fields.body));

    const [row] = await t.db.query<Record<string, unknown>>(`SELECT * FROM "UserRegistryApiKey" WHERE "Id" = $1`, [id]);
    expect(row.ApiKey).toBe(sha256(apiKey));
    expect(row.ApiKeyDisplay).toBe(apiKeyDisplay);
    expect(row.CreatedUser).toBe('Administrator');
    // The clear value (and its secret) is nowhere in the database.
    const dump = await t.db.query<{ text: string }>(
      `SELECT string_agg(x::text, ' ') AS text FROM (
         SELECT row_to_json(k)::text AS x FROM "UserRegistryApiKey" k
         UNION ALL SELECT row_to_json(l)::text FROM "UserLogin" l
         UNION ALL SELECT row_to_json(o)::text FROM "UserLogout" o) all_rows`,
    );
    expect(dump[0].text).not.toContain(apiKey);
    expect(dump[0].text).not.toContain(fields.secret);

    // Never shown again.
    const list = await admin.get(`/api/UserRegistry/${user.id}/ApiKey`);
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(apiKey);
    expect(list.json).toEqual([
      { id, name: 'Billing', description: 'nightly batch', apiKeyDisplay, createdDate: res.json.createdDate, createdUser: 'Administrator', lastUsedDate: null, lastUsedUserAgent: null },
    ]);
  });

  it('authenticates with the key: authenticationType ApiKey, no session times, no cookies', async () => {
    const user = await insertUser(t, { name: 'keyuser', password: STRONG });
    const key = await createKey(t, admin, user.id);
    const res = await sessionWithApiKey(t, key.apiKey);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      userName: 'keyuser',
      userRegistryId: user.id,
      authenticationType: 'ApiKey',
      sessionStartDate: null,
      expiration: null,
      absoluteExpiration: null,
    });
    expect(res.setCookies).toEqual([]);
  });

  it('refuses every tampered or made-up key with 401 "Key Not Found"', async () => {
    const user = await insertUser(t, { name: 'tamper', password: STRONG });
    const key = await createKey(t, admin, user.id);
    const f = keyFields(key.apiKey);
    const body = f.body;
    const tampered = [
      encodeKey(flipChar(body, 3), f.checksum), // a character of the secret, checksum kept
      encodeKey(flipChar(body, 3), checksumOf(flipChar(body, 3), 'another-hmac-key-0123456789')),
      encodeKey(body, flipChar(f.checksum, 0)), // a character of the checksum
      encodeKey(body, flipChar(f.checksum, 7)),
      encodeKey(`${f.secret}:2:tamper`, checksumOf(`${f.secret}:2:tamper`)), // another version, valid checksum
      encodeKey(`${f.secret}:1:Administrator`, f.checksum), // another user, checksum kept
      encodeKey(body, f.checksum.toUpperCase() === f.checksum ? 'zzzzzzzz' : f.checksum.toUpperCase()),
      flipChar(key.apiKey, 0),
      flipChar(key.apiKey, key.apiKey.length - 1),
      `${key.apiKey}0`,
      key.apiKey.slice(1),
      'not-a-key!',
      'x'.repeat(5000),
    ];
    for (const apiKey of tampered) {
      const res = await sessionWithApiKey(t, apiKey);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.json).toMatchObject({ status: 401, detail: 'Key Not Found' });
    }
    // A well-formed key with a valid checksum that was never issued: same answer.
    const forgedBody = `${'A'.repeat(43)}:1:tamper`;
    const forged = await sessionWithApiKey(t, encodeKey(forgedBody, checksumOf(forgedBody)));
    expect(forged.status).toBe(401);
    expect(forged.json.detail).toBe('Key Not Found');
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
  });

  it('x-api-key wins exclusively over bearer and cookie', async () => {
    const user = await insertUser(t, { name: 'precedence', password: STRONG });
    const key = await createKey(t, admin, user.id);
    // A valid key with a broken bearer token: the key is used.
    const withBrokenBearer = await sessionWithApiKey(t, key.apiKey, { authorization: 'Bearer broken.token.value' });
    expect(withBrokenBearer.status).toBe(200);
    expect(withBrokenBearer.json).toMatchObject({ userName: 'precedence', authenticationType: 'ApiKey' });
    // A valid key with the administrator's valid cookie: the key is used, no cookie is refreshed.
    const cookie = [...admin.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const withCookie = await sessionWithApiKey(t, key.apiKey, { cookie });
    expect(withCookie.json).toMatchObject({ userName: 'precedence', authenticationType: 'ApiKey' });
    expect(withCookie.setCookies).toEqual([]);
    // A broken key with a valid cookie or a valid bearer: refused.
    for (const extra of [{ cookie }, { authorization: `Bearer ${adminToken}` }] as Array<Record<string, string>>) {
      const res = await sessionWithApiKey(t, flipChar(key.apiKey, 5), extra);
      expect(res.status).toBe(401);
      expect(res.json.detail).toBe('Key Not Found');
    }
    // An empty x-api-key header is still an API key credential, and a broken one.
    expect((await sessionWithApiKey(t, '', { cookie })).status).toBe(401);
  });

  it('revokes: 204, refused at once, left out of the list, idempotent; the row keeps who and when', async () => {
    const user = await insertUser(t, { name: 'revoked', password: STRONG });
    const kept = await createKey(t, admin, user.id, { name: 'kept' });
    const gone = await createKey(t, admin, user.id, { name: 'gone' });
    expect((await sessionWithApiKey(t, gone.apiKey)).status).toBe(200);
    const del = await admin.delete(`/api/UserRegistry/${user.id}/ApiKey/${gone.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const refused = await sessionWithApiKey(t, gone.apiKey);
    expect(refused.status).toBe(401);
    expect(refused.json.detail).toBe('Key Not Found');
    expect((await sessionWithApiKey(t, kept.apiKey)).status).toBe(200);
    expect((await admin.delete(`/api/UserRegistry/${user.id}/ApiKey/${gone.id}`)).status).toBe(204);
    const list = await admin.get(`/api/UserRegistry/${user.id}/ApiKey`);
    expect(list.json.map((k: { id: number }) => k.id)).toEqual([kept.id]);
    const [row] = await t.db.query<Record<string, unknown>>(`SELECT * FROM "UserRegistryApiKey" WHERE "Id" = $1`, [gone.id]);
    expect(row).toMatchObject({ Deleted: true, DeletedUser: 'Administrator' });
    expect((row.DeletedDate as Date).getTime()).toBe(t.clock.nowMs());
    // A key id that is not this user's.
    const other = await insertUser(t, { name: 'revoked-other', password: STRONG });
    expect((await admin.delete(`/api/UserRegistry/${other.id}/ApiKey/${kept.id}`)).status).toBe(404);
    expect((await sessionWithApiKey(t, kept.apiKey)).status).toBe(200);
  });

  it('requires permission 35 and a user in the caller\'s tenant (landlord: any); 404 otherwise', async () => {
    const tenantAdmin = await insertUser(t, { name: 'tenant-admin', password: STRONG, tenantName: 'Tenant K', permissions: [Permission.ReadWriteSecurityUser] });
    const colleague = await insertUser(t, { name: 'colleague', password: STRONG, tenantName: 'Tenant K' });
    const stranger = await insertUser(t, { name: 'stranger', password: STRONG, tenantName: 'Tenant L' });
    const plain = await insertUser(t, { name: 'plain', password: STRONG, tenantName: 'Tenant K' });
    const browser = async (name: string) => {
      const b = new Browser(t.url);
      expect((await b.post('/api/Authentication/ByUserNamePassword', { userName: name, password: STRONG })).status).toBe(200);
      return b;
    };
    const ta = await browser('tenant-admin');
    const created = await ta.post(`/api/UserRegistry/${colleague.id}/ApiKey`, { name: 'k' });
    expect(created.status).toBe(201);
    expect((await ta.get(`/api/UserRegistry/${colleague.id}/ApiKey`)).status).toBe(200);
    for (const res of [
      await ta.post(`/api/UserRegistry/${stranger.id}/ApiKey`, { name: 'k' }),
      await ta.get(`/api/UserRegistry/${stranger.id}/ApiKey`),
      await ta.delete(`/api/UserRegistry/${stranger.id}/ApiKey/1`),
      await ta.post(`/api/UserRegistry/999999/ApiKey`, { name: 'k' }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    // The landlord reaches any tenant.
    expect((await admin.post(`/api/UserRegistry/${stranger.id}/ApiKey`, { name: 'k' })).status).toBe(201);
    // Without permission 35: 403.
    const p = await browser('plain');
    expect((await p.post(`/api/UserRegistry/${plain.id}/ApiKey`, { name: 'k' })).status).toBe(403);
    expect((await p.get(`/api/UserRegistry/${plain.id}/ApiKey`)).status).toBe(403);
    // Anonymous: 401.
    expect((await requestWithoutCookies(`${t.url}/api/UserRegistry/${plain.id}/ApiKey`, 'GET')).status).toBe(401);
    // A tenant administrator cannot mint a key for a user stronger than itself.
    const stronger = await insertUser(t, { name: 'stronger', password: STRONG, tenantName: 'Tenant K', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    expect((await ta.post(`/api/UserRegistry/${stronger.id}/ApiKey`, { name: 'k' })).status).toBe(403);
  });

  it('validates the request: 400 problems for a bad id, a missing or too long name; control characters stripped', async () => {
    const user = await insertUser(t, { name: 'validation', password: STRONG });
    for (const [path, body] of [
      [`/api/UserRegistry/abc/ApiKey`, { name: 'k' }],
      [`/api/UserRegistry/99999999999/ApiKey`, { name: 'k' }],
      [`/api/UserRegistry/${user.id}/ApiKey`, {}],
      [`/api/UserRegistry/${user.id}/ApiKey`, { name: '' }],
      [`/api/UserRegistry/${user.id}/ApiKey`, { name: '\u0001\u0002' }],
      [`/api/UserRegistry/${user.id}/ApiKey`, { name: 'n'.repeat(257) }],
      [`/api/UserRegistry/${user.id}/ApiKey`, { name: 'k', description: 'd'.repeat(1025) }],
      [`/api/UserRegistry/${user.id}/ApiKey`, { name: 42 }],
    ] as const) {
      const res = await admin.post(path, body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect((await admin.delete(`/api/UserRegistry/${user.id}/ApiKey/x`)).status).toBe(400);
    const res = await admin.post(`/api/UserRegistry/${user.id}/ApiKey`, { name: 'a\u0000b\u001b[31mc\u0085', description: 'line\r\nbreak' });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ name: 'ab[31mc', description: 'linebreak' });
  });

  it('follows the owner\'s state: registry changes at once, direct changes within a second; unreadable 503', async () => {
    const user = await insertUser(t, { name: 'stateful', password: STRONG });
    const key = await createKey(t, admin, user.id);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    // Through the registry: effective on the very next request (the change clears the owner cache).
    expect((await admin.put(`/api/UserRegistry/${user.id}`, { active: false })).status).toBe(200);
    expect((await sessionWithApiKey(t, key.apiKey)).json.detail).toBe('Key Not Found');
    expect((await admin.put(`/api/UserRegistry/${user.id}`, { active: true })).status).toBe(200);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    // Straight in the database: effective once the owner's state is a second old.
    const set = async (sql: string) => {
      await t.db.query(`UPDATE "UserRegistry" SET ${sql} WHERE "Id" = $1`, [user.id]);
      t.clock.advance(KEY_OWNER_STATE_TTL_MS);
    };
    await set(`"PasswordLocked" = true`);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(401);
    await set(`"PasswordLocked" = false`);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await t.db.query(`INSERT INTO "RoleRegistryPermission" VALUES ($1, 35)`, [user.roleRegistryId]);
    t.clock.advance(KEY_OWNER_STATE_TTL_MS);
    expect((await sessionWithApiKey(t, key.apiKey)).json.permissions).toEqual([35]);
    // The user row cannot be read: refused, 503 (fail closed).
    await t.db.query(`ALTER TABLE "RoleRegistryPermission" RENAME TO "RoleRegistryPermissionAway"`);
    try {
      t.clock.advance(KEY_OWNER_STATE_TTL_MS);
      const res = await sessionWithApiKey(t, key.apiKey);
      expect(res.status).toBe(503);
    } finally {
      await t.db.query(`ALTER TABLE "RoleRegistryPermissionAway" RENAME TO "RoleRegistryPermission"`);
    }
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await set(`"Deleted" = true`);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(401);
  });

  it('is untouched by logout, password change, RevokeTokens and TokensValidFrom', async () => {
    const user = await insertUser(t, { name: 'durable', password: STRONG, permissions: [] });
    const key = await createKey(t, admin, user.id);
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'durable', password: STRONG })).status).toBe(200);
    t.clock.advance(1000);
    expect((await browser.post('/api/Authentication/Logout')).status).toBe(200);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    // Logout with the key itself is not a session: nothing is revoked.
    expect((await requestWithoutCookies(`${t.url}/api/Authentication/Logout`, 'POST', { 'x-api-key': key.apiKey })).status).toBe(200);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    expect((await admin.post(`/api/UserRegistry/RevokeTokens/${user.id}`)).status).toBe(204);
    t.clock.advance(1000);
    const changed = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'durable', password: STRONG });
    expect(changed.status).toBe(200);
    const newPassword = 'An0ther-Strong-Passw0rd';
    expect((await browser.post('/api/Authentication/ChangePassword', { password: STRONG, newPassword, repeatNewPassword: newPassword })).status).toBe(200);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await t.db.query(`UPDATE "UserRegistry" SET "TokensValidFrom" = $2 WHERE "Id" = $1`, [user.id, new Date(t.clock.nowMs() + 3_600_000)]);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
  });

  it('writes lastUsedDate off the request path, at most once a minute per key', async () => {
    const user = await insertUser(t, { name: 'usage', password: STRONG });
    const key = await createKey(t, admin, user.id);
    const writer = t.app.get(ApiKeyUsageWriter);
    const lastUsed = async () =>
      (await t.db.query<{ LastUsedDate: Date | null }>(`SELECT "LastUsedDate" FROM "UserRegistryApiKey" WHERE "Id" = $1`, [key.id]))[0].LastUsedDate;
    const firstUse = t.clock.nowMs();
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await writer.flush();
    expect((await lastUsed())!.getTime()).toBe(firstUse);
    t.clock.advance(30_000);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await writer.flush();
    expect((await lastUsed())!.getTime()).toBe(firstUse);
    t.clock.advance(31_000);
    expect((await sessionWithApiKey(t, key.apiKey)).status).toBe(200);
    await writer.flush();
    expect((await lastUsed())!.getTime()).toBe(firstUse + 61_000);
    const list = await admin.get(`/api/UserRegistry/${user.id}/ApiKey`);
    expect(list.json[0].lastUsedDate).toBe(new Date(firstUse + 61_000).toISOString());
  });

  it('answers lastUsedUserAgent: the user agent of the use lastUsedDate records, stripped and bounded, written with it', async () => {
    const user = await insertUser(t, { name: 'device', password: STRONG });
    const plain = await createKey(t, admin, user.id, { name: 'plain' });
    const controls = await createKey(t, admin, user.id, { name: 'controls' });
    const long = await createKey(t, admin, user.id, { name: 'long' });
    const writer = t.app.get(ApiKeyUsageWriter);
    const list = async () => {
      const res = await admin.get(`/api/UserRegistry/${user.id}/ApiKey`);
      expect(res.status).toBe(200);
      return new Map<number, { lastUsedDate: string | null; lastUsedUserAgent: string | null }>(res.json.map((k: { id: number }) => [k.id, k]));
    };
    // A tab and two C1 controls pass HTTP (a header may carry them) and must not reach the column.
    const withControls = 'curl/8.5.0\tnightly\u0085 job\u009b';
    const longAgent = `python-requests/2.31.0 ${'x'.repeat(2000)}`;
    const firstUse = t.clock.nowMs();
    expect((await sessionWithApiKey(t, plain.apiKey, { 'user-agent': 'curl/8.5.0' })).status).toBe(200);
    expect((await sessionWithApiKey(t, controls.apiKey, { 'user-agent': withControls })).status).toBe(200);
    expect((await sessionWithApiKey(t, long.apiKey, { 'user-agent': longAgent })).status).toBe(200);
    // Nothing is written on the request path.
    for (const key of (await list()).values()) expect(key).toMatchObject({ lastUsedDate: null, lastUsedUserAgent: null });

    await writer.flush();
    let keys = await list();
    expect(keys.get(plain.id)).toMatchObject({ lastUsedDate: new Date(firstUse).toISOString(), lastUsedUserAgent: 'curl/8.5.0' });
    expect(keys.get(controls.id)!.lastUsedUserAgent).toBe('curl/8.5.0nightly job');
    expect(keys.get(long.id)!.lastUsedUserAgent).toBe(longAgent.slice(0, 512));
    const [row] = await t.db.query<{ LastUsedUserAgent: string }>(`SELECT "LastUsedUserAgent" FROM "UserRegistryApiKey" WHERE "Id" = $1`, [long.id]);
    expect(row.LastUsedUserAgent).toHaveLength(512);

    // Within the minute a use from elsewhere is not noted: date and device stay one use's pair.
    t.clock.advance(30_000);
    expect((await sessionWithApiKey(t, plain.apiKey, { 'user-agent': 'Wget/1.21.4' })).status).toBe(200);
    await writer.flush();
    expect((await list()).get(plain.id)).toMatchObject({ lastUsedDate: new Date(firstUse).toISOString(), lastUsedUserAgent: 'curl/8.5.0' });
    // A minute on, the latest use brings its own device with its date.
    t.clock.advance(31_000);
    expect((await sessionWithApiKey(t, plain.apiKey, { 'user-agent': 'Wget/1.21.4' })).status).toBe(200);
    await writer.flush();
    keys = await list();
    expect(keys.get(plain.id)).toMatchObject({ lastUsedDate: new Date(firstUse + 61_000).toISOString(), lastUsedUserAgent: 'Wget/1.21.4' });
    // The others were not used again and keep theirs.
    expect(keys.get(controls.id)).toMatchObject({ lastUsedDate: new Date(firstUse).toISOString(), lastUsedUserAgent: 'curl/8.5.0nightly job' });

    // An older use written late (another node's slower flush) moves neither the date nor the device back.
    await t.app.get(UserRegistryApiKeyRepository).recordLastUsed(new Map([[plain.id, { usedDate: new Date(firstUse + 1_000), userAgent: 'curl/7.0' }]]));
    expect((await list()).get(plain.id)).toMatchObject({ lastUsedDate: new Date(firstUse + 61_000).toISOString(), lastUsedUserAgent: 'Wget/1.21.4' });
  });

  it('reloads the active set from the database every minute (a revocation written elsewhere)', async () => {
    const user = await insertUser(t, { name: 'reload', password: STRONG });
    const key = await createKey(t, admin, user.id);
    await t.db.query(`UPDATE "UserRegistryApiKey" SET "Deleted" = true WHERE "Id" = $1`, [key.id]);
    // Until the set is reloaded, this node has not heard of it; a minute later it has.
    t.clock.advance(61_000);
    const res = await sessionWithApiKey(t, key.apiKey);
    expect(res.status).toBe(401);
    expect(res.json.detail).toBe('Key Not Found');
    expect(t.app.get(ActiveApiKeys).has(sha256(key.apiKey))).toBe(false);
  });

  it('lists only active keys, newest last, with who created them', async () => {
    const user = await insertUser(t, { name: 'lister', password: STRONG });
    expect((await admin.get(`/api/UserRegistry/${user.id}/ApiKey`)).json).toEqual([]);
    const a = await createKey(t, admin, user.id, { name: 'a' });
    const b = await createKey(t, admin, user.id, { name: 'b', description: null });
    const list = await admin.get(`/api/UserRegistry/${user.id}/ApiKey`);
    expect(list.json.map((k: { id: number }) => k.id)).toEqual([a.id, b.id]);
    expect(list.json[1]).toMatchObject({ name: 'b', description: null, createdUser: 'Administrator', lastUsedDate: null });
  });
});
