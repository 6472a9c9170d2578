import { randomBytes } from 'node:crypto';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { insertUser } from './helpers/users';
import { PasskeyChallenges } from '../src/passkeys/passkey-challenges';
import { AppSettings, SETTINGS } from '../src/config/config.module';
import { noneAttestation, PasskeyNode, softwarePasskey, startPasskeyNode } from './helpers/passkeys';
import { ActionTypeId } from '../src/admin-changes/admin-change.types';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

jest.setTimeout(180_000);

const PASSWORD = 'Passkey-Api-Password-1!';
const own = '/api/Authentication/Passkeys';

/**
 * Contract 20 through the HTTP API alone: every refusal that needs no authenticator (status and
 * UserLogin row), the registration rules, the lists, rename and removal, administrators' scope, the
 * 202 of the second factor and Passkeys=False. Stored passkeys are inserted as rows: their public key
 * is random bytes, so any assertion for them fails to verify (14), which is what these refusals need.
 * Genuine assertions are made by Chromium's virtual authenticator in passkeys-browser.e2e-spec.ts.
 */
describe('passkeys over the API (contract 20)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ env: { PasswordAttempts: '2', EnableMultifactorAuthentication: 'False' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function signIn(name: string): Promise<Browser> {
    const browser = new Browser(t.url);
    const res = await browser.post('/api/Authentication/ByUserNamePassword', { userName: name, password: PASSWORD });
    if (res.status !== 200) throw new Error(`sign-in of ${name}: ${res.status} ${res.text}`);
    return browser;
  }

  /** A stored passkey of the user (random key material: no assertion for it verifies). */
  async function storedPasskey(userRegistryId: number, name = 'Stored'): Promise<{ id: number; credentialId: Buffer }> {
    const credentialId = randomBytes(32);
    const [row] = await t.db.query<{ Id: number }>(
      `INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "SignCount", "Name", "CreatedDate")
       VALUES ($1, $2, $3, 0, $4, now()) RETURNING "Id"`,
      [userRegistryId, credentialId, randomBytes(77), name],
    );
    return { id: row.Id, credentialId };
  }

  /** An assertion-shaped body naming `credentialId` whose contents cannot verify. */
  const assertion = (credentialId: Buffer) => ({
    id: credentialId.toString('base64url'),
    rawId: credentialId.toString('base64url'),
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: 'eyJ0eXBlIjoid2ViYXV0aG4uZ2V0In0', authenticatorData: 'AAAA', signature: 'AAAA' },
  });

  async function challengeId(): Promise<string> {
    const res = await new Browser(t.url).post('/api/Authentication/Passkey/Options', {});
    expect(res.status).toBe(200);
    return res.json.challengeId as string;
  }

  const lastLogin = async () =>
    (
      await t.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null; UserRegistryId: number | null; CreatedUser: string | null }>(
        `SELECT "AuthenticationTypeId", "FailureTypeId", "UserRegistryId", "CreatedUser" FROM "UserLogin" ORDER BY "Id" DESC LIMIT 1`,
      )
    )[0];

  it('answers sign-in options with a 32-byte challenge, no allowed credentials, user verification required', async () => {
    const res = await new Browser(t.url).post('/api/Authentication/Passkey/Options', {});
    expect(res.status).toBe(200);
    expect(res.json.challengeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Buffer.from(res.json.options.challenge, 'base64url')).toHaveLength(32);
    expect(res.json.options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    expect(res.json.options.allowCredentials ?? []).toEqual([]);
  });

  it('refuses an unknown credential (13, no user named), an inactive user (2), a bad assertion or challenge (14), locks like a password, then 3', async () => {
    const res13 = await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(randomBytes(32)) });
    expect(res13.status).toBe(401);
    expect(res13.json.detail).toBe('The user name, password or passcode is not valid.');
    expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: FailureTypeId.UnknownPasskey, UserRegistryId: null, CreatedUser: null });

    const inactive = await insertUser(t, { name: 'pk-inactive', password: PASSWORD, active: false });
    const inactiveKey = await storedPasskey(inactive.id);
    const res2 = await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(inactiveKey.credentialId) });
    expect(res2.status).toBe(401);
    expect(res2.text).toBe(res13.text);
    expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: FailureTypeId.NotActive, UserRegistryId: inactive.id, CreatedUser: 'pk-inactive' });

    const user = await insertUser(t, { name: 'pk-locked', password: PASSWORD });
    const key = await storedPasskey(user.id);
    // A challenge nobody issued, then a real one with an assertion that does not verify: both 14.
    for (const id of ['00000000-0000-4000-8000-000000000000', await challengeId()]) {
      const res = await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: id, response: assertion(key.credentialId) });
      expect(res.status).toBe(401);
      expect(res.text).toBe(res13.text);
      expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: FailureTypeId.PasskeyAssertionInvalid, UserRegistryId: user.id, CreatedUser: 'pk-locked' });
    }
    // PasswordAttempts=2: the third failure locks (5 on the attempt that reaches it, as for passwords), then 3.
    await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(key.credentialId) });
    const [state] = await t.db.query<{ PasswordLocked: boolean }>(`SELECT "PasswordLocked" FROM "UserRegistry" WHERE "Id" = $1`, [user.id]);
    expect(state.PasswordLocked).toBe(true);
    await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(key.credentialId) });
    expect((await lastLogin()).FailureTypeId).toBe(FailureTypeId.PasswordLocked);
  });

  it('refuses an active user of an inactive tenant as inactive (2) by passkey and by password alike', async () => {
    const user = await insertUser(t, { name: 'pk-closed-bank', password: PASSWORD, tenantName: 'Closed Bank' });
    const key = await storedPasskey(user.id);
    await t.db.query(`UPDATE "TenantRegistry" SET "Active" = false WHERE "Id" = $1`, [user.tenantRegistryId]);

    const byPasskey = await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(key.credentialId) });
    expect(byPasskey.status).toBe(401);
    expect(byPasskey.json.detail).toBe('The user name, password or passcode is not valid.');
    expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: FailureTypeId.NotActive, UserRegistryId: user.id, CreatedUser: 'pk-closed-bank' });

    const byPassword = await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'pk-closed-bank', password: PASSWORD });
    expect(byPassword.status).toBe(401);
    expect(byPassword.text).toBe(byPasskey.text);
    expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, FailureTypeId: FailureTypeId.NotActive, UserRegistryId: user.id, CreatedUser: 'pk-closed-bank' });
  });

  it('forgets expired challenges once a minute (the table stays small)', async () => {
    await challengeId();
    const live = async () => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "PasskeyChallenge"`))[0].n;
    expect(await live()).toBeGreaterThan(0);
    t.clock.advance(2 * 60_000 + 1);
    await t.app.get(PasskeyChallenges).purgeExpired();
    expect(await live()).toBe(0);
  });

  it('refuses a malformed body with 400 and never answers 5xx to a garbage response', async () => {
    const browser = new Browser(t.url);
    expect((await browser.post('/api/Authentication/ByPasskey', { challengeId: 'nope', response: {} })).status).toBe(400);
    expect((await browser.post('/api/Authentication/ByPasskey', { challengeId: await challengeId() })).status).toBe(400);
    for (const response of [{}, { id: 12 }, { id: 'x'.repeat(2000) }, { id: 'AAAAAAAAAAAAAAAAAAAAAA', response: 'no' }]) {
      expect((await browser.post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response })).status).toBe(401);
    }
  });

  it('registers only after a recent sign-in (403 ReauthenticationRequired), refuses a bad attestation (400) and a used challenge', async () => {
    const user = await insertUser(t, { name: 'pk-register', password: PASSWORD });
    // Signed in before the passkey exists (a user holding one must also present it: the second factor).
    const browser = await signIn('pk-register');
    const existing = await storedPasskey(user.id);
    const options = await browser.post(`${own}/Options`, {});
    expect(options.status).toBe(200);
    expect(Buffer.from(options.json.challenge, 'base64url')).toHaveLength(32);
    expect(options.json.rp).toEqual({ name: 'Transaction Monitoring', id: 'localhost' });
    expect(options.json.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
    expect(options.json.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([existing.credentialId.toString('base64url')]);

    const bad = await browser.post(own, { name: 'Bad', response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: 'AAAA' } } });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    // The challenge went with that attempt.
    const again = await browser.post(own, { name: 'Bad', response: {} });
    expect(again.status).toBe(400);
    expect(again.json.detail).toMatch(/challenge is unknown, used or expired/);

    t.clock.advance(5 * 60_000 + 1000);
    const late = await browser.post(`${own}/Options`, {});
    expect(late.status).toBe(403);
    expect(late.json.code).toBe('ReauthenticationRequired');
    expect((await browser.post(own, { name: 'Late', response: {} })).json.code).toBe('ReauthenticationRequired');
    expect(await t.db.query(`SELECT 1 FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id])).toHaveLength(1);
  });

  it('refuses an API key as a recent sign-in', async () => {
    await insertUser(t, { name: 'pk-keyholder', password: PASSWORD, landlord: true });
    const admin = await signIn('pk-keyholder');
    const [{ Id: id }] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'pk-keyholder'`);
    const key = await admin.post(`/api/UserRegistry/${id}/ApiKey`, { name: 'k' });
    expect(key.status).toBe(201);
    const res = await new Browser(t.url, {}).post(`${own}/Options`, {}, { 'x-api-key': key.json.apiKey });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe('ReauthenticationRequired');
  });

  it('lists, renames (1-64, control characters removed) and removes one\'s own passkeys; another user\'s answer 404', async () => {
    const user = await insertUser(t, { name: 'pk-owner', password: PASSWORD });
    const other = await insertUser(t, { name: 'pk-other', password: PASSWORD });
    const browser = await signIn('pk-owner');
    const mine = await storedPasskey(user.id, 'Mine');
    const theirs = await storedPasskey(other.id, 'Theirs');
    const list = await browser.get(own);
    expect(list.status).toBe(200);
    expect(list.json).toEqual([
      { id: mine.id, name: 'Mine', createdDate: expect.any(String), lastUsedDate: null, lastUsedDevice: null, backupEligible: false, backedUp: false },
    ]);
    const renamed = await browser.put(`${own}/${mine.id}`, { name: 'Yubi\u0007Key\u0085 5' });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({ id: mine.id, name: 'YubiKey 5' });
    for (const name of ['', '\u0001\u0002', 'x'.repeat(65)]) expect((await browser.put(`${own}/${mine.id}`, { name })).status).toBe(400);
    expect((await browser.put(`${own}/${mine.id}`, { name: 'x'.repeat(64) })).status).toBe(200);
    expect((await browser.put(`${own}/${theirs.id}`, { name: 'Stolen' })).status).toBe(404);
    expect((await browser.delete(`${own}/${theirs.id}`)).status).toBe(404);
    expect((await browser.delete(`${own}/${mine.id}`)).status).toBe(204);
    expect((await browser.delete(`${own}/${mine.id}`)).status).toBe(404);
    expect((await browser.get(own)).json).toEqual([]);
    // A removed passkey signs nobody in: its credential id is unknown (13).
    await new Browser(t.url).post('/api/Authentication/ByPasskey', { challengeId: await challengeId(), response: assertion(mine.credentialId) });
    expect(await lastLogin()).toMatchObject({ FailureTypeId: FailureTypeId.UnknownPasskey, UserRegistryId: null });
  });

  it('lets administrators list and remove a user\'s passkeys within their tenant only', async () => {
    const user = await insertUser(t, { name: 'pk-managed', password: PASSWORD, tenantName: 'Tenant B' });
    const key = await storedPasskey(user.id, 'Managed');
    await insertUser(t, { name: 'pk-tenant-admin', password: PASSWORD, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityUser] });
    await insertUser(t, { name: 'pk-plain', password: PASSWORD, tenantName: 'Tenant B' });
    await insertUser(t, { name: 'pk-landlord', password: PASSWORD, landlord: true });
    const outsider = await signIn('pk-tenant-admin');
    expect((await outsider.get(`/api/UserRegistry/${user.id}/Passkeys`)).status).toBe(404);
    expect((await outsider.delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(404);
    expect((await (await signIn('pk-plain')).get(`/api/UserRegistry/${user.id}/Passkeys`)).status).toBe(403);
    const landlord = await signIn('pk-landlord');
    const list = await landlord.get(`/api/UserRegistry/${user.id}/Passkeys`);
    expect(list.json.map((p: { name: string }) => p.name)).toEqual(['Managed']);
    expect((await landlord.delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(204);
    expect((await landlord.delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(404);
    expect((await landlord.get(`/api/UserRegistry/${user.id}/Passkeys`)).json).toEqual([]);
  });

  it('records each registration and removal as an AdminChange (19, 20), refused administrator removals as failed rows, a 400 not at all', async () => {
    const user = await insertUser(t, { name: 'pk-audited', password: PASSWORD, tenantName: 'Tenant B' });
    await insertUser(t, { name: 'pk-audit-landlord', password: PASSWORD, landlord: true });
    await insertUser(t, { name: 'pk-audit-outsider', password: PASSWORD, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityUser] });
    await insertUser(t, { name: 'pk-audit-plain', password: PASSWORD, tenantName: 'Tenant B' });
    const origin = t.app.get<AppSettings>(SETTINGS).passkeyOrigins[0];
    const owner = await signIn('pk-audited');
    const register = async (name: string, flags: { backupEligible?: boolean; backedUp?: boolean }) => {
      const options = await owner.post(`${own}/Options`, {});
      expect(options.status).toBe(200);
      const made = noneAttestation(options.json, origin, flags);
      const res = await owner.post(own, { name, response: made.response });
      expect(res.status).toBe(201);
      return { ...made, id: res.json.id as number, aaguid: res.json.aaguid as string | null };
    };
    const laptop = await register('Laptop', { backupEligible: true, backedUp: true });
    const key = await register('Key', {});
    const [{ Id: tenantB }] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "TenantRegistry" WHERE "Name" = 'Tenant B'`);

    expect((await owner.delete(`${own}/${laptop.id}`)).status).toBe(204);
    // Refused: outside the administrator's tenant (404), no permission (403); a malformed id (400) writes nothing.
    expect((await (await signIn('pk-audit-outsider')).delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(404);
    expect((await (await signIn('pk-audit-plain')).delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(403);
    const landlord = await signIn('pk-audit-landlord');
    expect((await landlord.delete(`/api/UserRegistry/${user.id}/Passkeys/abc`)).status).toBe(400);
    expect((await landlord.delete(`/api/UserRegistry/${user.id}/Passkeys/${key.id}`)).status).toBe(204);

    // The rows are dated by the service's clock (ahead of the database's after the tests above): read at that time.
    const read = await landlord.get('/api/AdminChange?targetTable=UserPasskey&take=100');
    expect(read.status).toBe(200);
    // This test's passkeys only (the tests above removed others), oldest first.
    const rows = read.json.rows
      .filter((r: { targetId: number }) => r.targetId === laptop.id || r.targetId === key.id)
      .sort((a: { id: string }, b: { id: string }) => Number(a.id) - Number(b.id));
    const [{ Id: landlordId }] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'pk-audit-landlord'`);
    const shown = (side: 'before' | 'after', p: { name: string; backupEligible: boolean; backedUp: boolean; aaguid: string | null }) => {
      const pair = (v: unknown) => (side === 'before' ? [v, null] : [null, v]);
      return { aaguid: pair(p.aaguid), backedUp: pair(p.backedUp), backupEligible: pair(p.backupEligible), name: pair(p.name), userRegistryId: pair(user.id) };
    };
    const laptopFields = { name: 'Laptop', backupEligible: true, backedUp: true, aaguid: laptop.aaguid };
    const keyFields = { name: 'Key', backupEligible: false, backedUp: false, aaguid: key.aaguid };
    expect(rows.map((r: Record<string, unknown>) => [r.actionType, r.targetTable, r.targetId, r.targetName, r.targetTenantRegistryId, r.createdUser, r.failed, r.changes])).toEqual([
      ['PasskeyRegistered', 'UserPasskey', laptop.id, 'Laptop', tenantB, 'pk-audited', false, shown('after', laptopFields)],
      ['PasskeyRegistered', 'UserPasskey', key.id, 'Key', tenantB, 'pk-audited', false, shown('after', keyFields)],
      ['PasskeyRemoved', 'UserPasskey', laptop.id, 'Laptop', tenantB, 'pk-audited', false, shown('before', laptopFields)],
      ['PasskeyRemoved', 'UserPasskey', key.id, null, null, 'pk-audit-outsider', true, {}],
      ['PasskeyRemoved', 'UserPasskey', key.id, null, null, 'pk-audit-plain', true, {}],
      ['PasskeyRemoved', 'UserPasskey', key.id, 'Key', tenantB, 'pk-audit-landlord', false, shown('before', keyFields)],
    ]);
    // The 400 (malformed passkey id) wrote nothing: the landlord's one row is its removal.
    expect(read.json.rows.filter((r: { createdUser: string }) => r.createdUser === 'pk-audit-landlord')).toHaveLength(1);
    expect(rows[5]).toMatchObject({ userRegistryId: landlordId, actionTypeId: ActionTypeId.PasskeyRemoved, credentialType: 'Cookie session' });
    expect(rows[0]).toMatchObject({ userRegistryId: user.id, actionTypeId: ActionTypeId.PasskeyRegistered });
    // Never the key material: neither credential id nor public key, in any encoding, in a row or in the read.
    const stored = JSON.stringify(await t.db.query(`SELECT * FROM "AdminChange" WHERE "TargetTable" = 'UserPasskey'`));
    for (const made of [laptop, key]) {
      for (const bytes of [made.credentialId, made.publicKey]) {
        for (const text of [bytes.toString('base64url'), bytes.toString('base64'), bytes.toString('hex')]) {
          expect(stored).not.toContain(text);
          expect(read.text).not.toContain(text);
        }
      }
    }
  });

  it('asks a user with a passkey for it after the password (202); a failed passkey there is 14 on a password row', async () => {
    const user = await insertUser(t, { name: 'pk-factor', password: PASSWORD });
    const key = await storedPasskey(user.id);
    const browser = new Browser(t.url);
    const first = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'pk-factor', password: PASSWORD });
    expect(first.status).toBe(202);
    expect(first.json).toMatchObject({ mfaRequired: true, methods: ['passkey'], challengeId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(first.json.options.allowCredentials.map((c: { id: string }) => c.id)).toEqual([key.credentialId.toString('base64url')]);
    expect(browser.cookies.size).toBe(0);
    const second = await browser.post('/api/Authentication/ByUserNamePassword', {
      userName: 'pk-factor',
      password: PASSWORD,
      passkey: { challengeId: first.json.challengeId, response: assertion(key.credentialId) },
    });
    expect(second.status).toBe(401);
    expect(await lastLogin()).toEqual({ AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, FailureTypeId: FailureTypeId.PasskeyAssertionInvalid, UserRegistryId: user.id, CreatedUser: 'pk-factor' });
    // Another user's challenge answers nothing for this one (cross-user), and the wrong password never reaches the passkey.
    const third = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'pk-factor', password: 'wrong', passkey: { challengeId: first.json.challengeId, response: assertion(key.credentialId) } });
    expect(third.status).toBe(401);
    expect((await lastLogin()).FailureTypeId).toBe(FailureTypeId.PasswordMismatch);
  });
});

/**
 * PasskeyUserVerification=preferred (contract 20): an assertion without user verification is only one
 * factor, so with the passcode on (contract 7) the sign-in answers the 202 of a password's second
 * factor, and the passcode completes it; with user verification it is both factors. Genuine
 * assertions, signed in the test by a P-256 credential it holds (softwarePasskey).
 */
describe('PasskeyUserVerification=preferred with the passcode on', () => {
  let t: PasskeyNode;
  const PASSCODE = '12345678';

  beforeAll(async () => {
    t = await startPasskeyNode({ env: { PasskeyUserVerification: 'preferred', EnableMultifactorAuthentication: 'True', PasswordAttempts: '3' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  async function passkeyUser(name: string) {
    const user = await insertUser(t, { name, password: PASSWORD });
    const device = softwarePasskey(t.origin);
    await t.db.query(
      `INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "SignCount", "Name", "CreatedDate") VALUES ($1, $2, $3, 0, 'soft', now())`,
      [user.id, device.credentialId, device.publicKey],
    );
    return { user, device };
  }

  /** Options, then ByPasskey with an assertion of `device` over its challenge (and `mfa` when given). */
  async function byPasskey(browser: Browser, device: ReturnType<typeof softwarePasskey>, userVerified: boolean, mfa?: string) {
    const options = await browser.post('/api/Authentication/Passkey/Options', {});
    expect(options.status).toBe(200);
    expect(options.json.options.userVerification).toBe('preferred');
    const response = device.assert(options.json.options.challenge as string, { userVerified });
    return browser.post('/api/Authentication/ByPasskey', { challengeId: options.json.challengeId, response, ...(mfa === undefined ? {} : { mfa }) });
  }

  const rows = (userRegistryId: number) =>
    t.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null }>(
      `SELECT "AuthenticationTypeId", "FailureTypeId" FROM "UserLogin" WHERE "UserRegistryId" = $1 ORDER BY "Id"`,
      [userRegistryId],
    );

  it('asks for the passcode after a passkey without user verification (202, no cookie, no row), and the passcode completes it', async () => {
    const { user, device } = await passkeyUser('pk-preferred');
    const browser = new Browser(t.url);
    const first = await byPasskey(browser, device, false);
    expect(first.status).toBe(202);
    expect(first.json).toEqual({ mfaRequired: true });
    expect(browser.cookies.size).toBe(0);
    expect(await rows(user.id)).toEqual([]);

    // A challenge answers once: the client signs a fresh one and sends the passcode with it.
    const second = await byPasskey(browser, device, false, PASSCODE);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ token: expect.any(String), expiration: expect.any(String) });
    expect(browser.cookies.size).toBe(2);
    expect(await rows(user.id)).toEqual([{ AuthenticationTypeId: 4, FailureTypeId: null }]);
    const [session] = await t.db.query<{ AuthenticationTypeId: number }>(`SELECT "AuthenticationTypeId" FROM "UserSession" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(session.AuthenticationTypeId).toBe(4);
  });

  it('refuses a wrong passcode after a passkey without user verification (401, FailureTypeId 11, counted toward the lockout)', async () => {
    const { user, device } = await passkeyUser('pk-preferred-wrong');
    const wrong = await byPasskey(new Browser(t.url), device, false, '00000000');
    expect(wrong.status).toBe(401);
    expect(wrong.json.detail).toBe('The user name, password or passcode is not valid.');
    expect(await rows(user.id)).toEqual([{ AuthenticationTypeId: 4, FailureTypeId: 11 }]);
    const [state] = await t.db.query<{ FailedPasswordCount: number }>(`SELECT "FailedPasswordCount" FROM "UserRegistry" WHERE "Id" = $1`, [user.id]);
    expect(state.FailedPasswordCount).toBe(1);
  });

  it('takes a passkey with user verification as both factors: signed in at once, no passcode asked', async () => {
    const { user, device } = await passkeyUser('pk-preferred-uv');
    const browser = new Browser(t.url);
    const res = await byPasskey(browser, device, true);
    expect(res.status).toBe(200);
    expect(browser.cookies.size).toBe(2);
    expect(await rows(user.id)).toEqual([{ AuthenticationTypeId: 4, FailureTypeId: null }]);
    const [state] = await t.db.query<{ FailedPasswordCount: number; LastLoginDate: Date | null }>(
      `SELECT "FailedPasswordCount", "LastLoginDate" FROM "UserRegistry" WHERE "Id" = $1`,
      [user.id],
    );
    expect(state).toEqual({ FailedPasswordCount: 0, LastLoginDate: expect.any(Date) });
  });

  it('accepts a counter of 0 every time and keeps the stored one; a non-zero counter must move it forward (15 otherwise)', async () => {
    const { user, device } = await passkeyUser('pk-counter');
    const stored = async () => Number((await t.db.query<{ SignCount: string }>(`SELECT "SignCount" FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id]))[0].SignCount);
    const signIn = async (counter: number) => {
      const browser = new Browser(t.url);
      const options = await browser.post('/api/Authentication/Passkey/Options', {});
      return (await browser.post('/api/Authentication/ByPasskey', { challengeId: options.json.challengeId, response: device.assert(options.json.options.challenge as string, { counter }) })).status;
    };
    expect(await signIn(0)).toBe(200);
    expect(await signIn(0)).toBe(200);
    expect(await stored()).toBe(0);
    expect(await signIn(5)).toBe(200);
    expect(await stored()).toBe(5);
    // A synced passkey (0) after counting ones still signs in and leaves the counter; going back is refused.
    expect(await signIn(0)).toBe(200);
    expect(await stored()).toBe(5);
    expect(await signIn(5)).toBe(401);
    expect(await signIn(3)).toBe(401);
    expect(await stored()).toBe(5);
    expect((await rows(user.id)).map((r) => r.FailureTypeId)).toEqual([null, null, null, null, 15, 15]);
  });

  it('refuses replaying the assertion of a 202 with the passcode (the challenge answered once: 14)', async () => {
    const { user, device } = await passkeyUser('pk-preferred-replay');
    const browser = new Browser(t.url);
    const options = await browser.post('/api/Authentication/Passkey/Options', {});
    const body = { challengeId: options.json.challengeId, response: device.assert(options.json.options.challenge as string, { userVerified: false }) };
    expect((await browser.post('/api/Authentication/ByPasskey', body)).status).toBe(202);
    const replay = await browser.post('/api/Authentication/ByPasskey', { ...body, mfa: PASSCODE });
    expect(replay.status).toBe(401);
    expect(await rows(user.id)).toEqual([{ AuthenticationTypeId: 4, FailureTypeId: 14 }]);
  });
});

describe('Passkeys=False', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { Passkeys: 'False' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 404 on every passkey route and asks no passkey after a password', async () => {
    const user = await insertUser(t, { name: 'pk-off', password: PASSWORD, landlord: true });
    await t.db.query(`INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "Name") VALUES ($1, $2, $3, 'k')`, [user.id, randomBytes(32), randomBytes(77)]);
    const browser = new Browser(t.url);
    const signIn = await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'pk-off', password: PASSWORD });
    expect(signIn.status).toBe(200);
    const anonymous = new Browser(t.url);
    expect((await anonymous.post('/api/Authentication/Passkey/Options', {})).status).toBe(404);
    expect((await anonymous.post('/api/Authentication/ByPasskey', { challengeId: '00000000-0000-4000-8000-000000000000', response: {} })).status).toBe(404);
    expect((await browser.post(`${own}/Options`, {})).status).toBe(404);
    expect((await browser.post(own, { name: 'x', response: {} })).status).toBe(404);
    expect((await browser.get(own)).status).toBe(404);
    expect((await browser.put(`${own}/1`, { name: 'x' })).status).toBe(404);
    expect((await browser.delete(`${own}/1`)).status).toBe(404);
    expect((await browser.get(`/api/UserRegistry/${user.id}/Passkeys`)).status).toBe(404);
    expect((await browser.delete(`/api/UserRegistry/${user.id}/Passkeys/1`)).status).toBe(404);
  });
});
