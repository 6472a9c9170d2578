import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { confirmInPage, launchBrowser, openBrowserPage, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { CapturedLogs } from './helpers/logs';
import { cosePublicKey, passkeyPorts, PasskeyNode, startPasskeyNode, VirtualAuthenticator } from './helpers/passkeys';
import { insertUser } from './helpers/users';
import { PasskeyUsageWriter } from '../src/passkeys/passkey-usage.writer';
import { AuthenticationTypeId, FailureTypeId } from '../src/sign-in-trail/audit.types';

jest.setTimeout(240_000);

const PASSWORD = 'Passkey-User-Password-1!';

/**
 * Every ceremony of contract 20 in a real Chromium, with the DevTools WebAuthn virtual authenticator
 * as the only authenticator: no client code but the pages' own. Chromium's virtual authenticator
 * answers a conditional (autofill) request by itself as soon as it holds a matching credential, which
 * is how "autofill" is exercised; the button is exercised with the authenticator plugged in only
 * after the page has started its quiet autofill request.
 */
describe('passkeys in Chromium with the DevTools virtual authenticator (contract 20)', () => {
  let a: PasskeyNode;
  let b: PasskeyNode;
  let chromium: Chromium;
  const logs = new CapturedLogs();
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // Two nodes on one database, each accepting the other's origin: a ceremony begun at A may end at B.
    const { ports, origins } = await passkeyPorts(2);
    a = await startPasskeyNode({ port: ports[0], origins, logger: logs });
    b = await startPasskeyNode({ port: ports[1], origins, db: a.db });
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await b?.close();
    await a?.close();
  });
  afterEach(async () => {
    for (const context of contexts.splice(0)) await context.close();
    expect(problems.splice(0)).toEqual([]);
  });

  async function session(viewport?: { width: number; height: number }): Promise<Page> {
    const { context, page } = await openBrowserPage(chromium, { viewport });
    contexts.push(context);
    return watchPage(page, problems);
  }

  /** Signs in with the password through the page, opens /Account/Passkeys and adds a passkey named `name`. */
  async function register(page: Page, userName: string, name: string, node: PasskeyNode = a): Promise<string> {
    await signInThroughPage(page, node.origin, userName, PASSWORD, '/Account/Passkeys');
    await page.locator('#passkeys[data-loaded="true"]').waitFor();
    await page.fill('#passkey-name', name);
    await page.click('#add-passkey');
    const said = page.locator('#passkey-messages [data-testid^="passkey-"]');
    await said.waitFor();
    const text = await said.innerText();
    // The page says "is added" before its list is read again: wait for the new row, so that what a test
    // reads of the list next is the list after the registration (a CI run read the empty one).
    if (text.includes('is added')) await page.locator('#passkey-list .passkey-name', { hasText: name }).waitFor();
    return text;
  }

  /**
   * Signs the browser out by forgetting its cookies, away from any page first: a signed-in page left
   * open would see its next request refused and go to the sign-in page itself, racing (and in a CI run
   * interrupting) the test's own navigation.
   */
  async function forgetSession(page: Page): Promise<void> {
    await page.goto('about:blank');
    await page.context().clearCookies();
  }

  /** Opens the sign-in page with the authenticator present: its autofill request is answered at once. */
  async function signInByAutofill(page: Page, node: PasskeyNode = a, returnUrl = '/Account/Sessions'): Promise<void> {
    await forgetSession(page);
    await page.goto(`${node.origin}/Account/Login?returnUrl=${encodeURIComponent(returnUrl)}`);
  }

  const loginRows = (userName: string | null) =>
    a.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null; UserRegistryId: number | null; CreatedUser: string | null }>(
      `SELECT "AuthenticationTypeId", "FailureTypeId", "UserRegistryId", "CreatedUser" FROM "UserLogin"
        WHERE "CreatedUser" IS NOT DISTINCT FROM $1 AND "AuthenticationTypeId" = 4 ORDER BY "Id"`,
      [userName],
    );
  const failedCount = async (id: number) =>
    (await a.db.query<{ n: number }>(`SELECT "FailedPasswordCount" AS n FROM "UserRegistry" WHERE "Id" = $1`, [id]))[0].n;
  const loginError = (page: Page) => page.getByTestId('login-error').innerText();

  it('registers on /Account/Passkeys, signs in by autofill, and the sessions page says Passkey', async () => {
    const user = await insertUser(a, { name: 'pk-autofill', password: PASSWORD });
    const page = await session();
    const authenticator = await VirtualAuthenticator.add(page);
    // The field the browser fills: username plus webauthn (conditional mediation).
    await page.goto(`${a.origin}/Account/Login`);
    expect(await page.locator('input[name="userName"]').getAttribute('autocomplete')).toBe('username webauthn');
    expect(await page.locator('#passkey-login').innerText()).toBe('Sign in with a passkey');
    expect(await register(page, 'pk-autofill', 'Laptop')).toContain('is added');
    expect(await page.locator('#passkey-list .passkey-name').allInnerTexts()).toEqual(['Laptop']);
    expect(await page.locator('#passkey-list').innerText()).toContain('Device-bound');
    const [stored] = await a.db.query<{ Name: string; BackupEligible: boolean; CredentialId: Buffer }>(
      `SELECT "Name", "BackupEligible", "CredentialId" FROM "UserPasskey" WHERE "UserRegistryId" = $1`,
      [user.id],
    );
    expect(stored.Name).toBe('Laptop');
    expect(stored.BackupEligible).toBe(false);
    expect((await authenticator.credentials()).map((c) => Buffer.from(c.credentialId, 'base64').toString('base64url'))).toEqual([
      stored.CredentialId.toString('base64url'),
    ]);
    await signInByAutofill(page);
    await page.waitForURL((url) => url.pathname === '/Account/Sessions');
    await page.locator('#sessions[data-loaded="true"]').waitFor();
    expect(await page.locator('.current-session').innerText()).toContain('Passkey');
    expect(await loginRows('pk-autofill')).toEqual([{ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: null, UserRegistryId: user.id, CreatedUser: 'pk-autofill' }]);
    // The registration's password session, and this one (the clock stands still: same start).
    const sessions = await a.db.query<{ AuthenticationTypeId: number }>(
      `SELECT "AuthenticationTypeId" FROM "UserSession" WHERE "UserRegistryId" = $1 ORDER BY "AuthenticationTypeId"`,
      [user.id],
    );
    expect(sessions.map((r) => r.AuthenticationTypeId)).toEqual([1, 4]);
    await screenshot(page, 'passkeys-sessions-1366');

    // The use is written off the request path (at most once a minute): the list then shows it and its device.
    await a.app.get(PasskeyUsageWriter).flush();
    const [used] = await a.db.query<{ LastUsedDate: Date | null; LastUsedUserAgent: string | null }>(
      `SELECT "LastUsedDate", "LastUsedUserAgent" FROM "UserPasskey" WHERE "UserRegistryId" = $1`,
      [user.id],
    );
    expect(used.LastUsedDate).not.toBeNull();
    expect(used.LastUsedUserAgent).toMatch(/Chrome/);

    // Rename and look at the page at both widths.
    await page.goto(`${a.origin}/Account/Passkeys`);
    await page.locator('#passkeys[data-loaded="true"]').waitFor();
    await page.click('button.rename-passkey');
    await page.fill('form.rename-form input', 'Work laptop');
    await page.click('form.rename-form button[type="submit"]');
    await page.locator('#passkey-list .passkey-name', { hasText: 'Work laptop' }).waitFor();
    expect(await page.locator('#passkey-list').innerText()).toContain('Chrom');
    // Rename and Remove stand apart (they touched at 1366 px), at both widths.
    const buttonGap = () =>
      page.evaluate(() => document.querySelector('button.remove-passkey')!.getBoundingClientRect().left - document.querySelector('button.rename-passkey')!.getBoundingClientRect().right);
    expect(await buttonGap()).toBeGreaterThanOrEqual(6);
    await screenshot(page, 'passkeys-account-1366');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('#passkeys[data-loaded="true"]').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(await buttonGap()).toBeGreaterThanOrEqual(6);
    await screenshot(page, 'passkeys-account-390');
  });

  it('signs in with the "Sign in with a passkey" button, the challenge taken at node A and answered at node B', async () => {
    const user = await insertUser(a, { name: 'pk-button', password: PASSWORD });
    const page = await session();
    const first = await VirtualAuthenticator.add(page);
    expect(await register(page, 'pk-button', 'Key')).toContain('is added');
    const [credential] = await first.credentials();
    await first.remove();

    // No authenticator while the page starts its autofill request; then the device is plugged in.
    await forgetSession(page);
    await page.goto(`${a.origin}/Account/Login?returnUrl=%2FAccount%2FSessions`);
    await page.locator('#passkey-login').waitFor();
    const second = await VirtualAuthenticator.add(page);
    await first.copyTo(second, credential);
    // The assertion (over A's challenge, with A's origin) is posted to node B.
    let forwarded = '';
    await page.route('**/api/Authentication/ByPasskey', async (route) => {
      forwarded = route.request().postData() ?? '';
      const response = await route.fetch({ url: `${b.origin}/api/Authentication/ByPasskey`, headers: { ...route.request().headers(), origin: b.origin } });
      await route.fulfill({ response });
    });
    const answered = page.waitForResponse('**/api/Authentication/ByPasskey');
    await page.click('#passkey-login');
    expect((await answered).status()).toBe(200);
    expect(await loginRows('pk-button')).toEqual([{ AuthenticationTypeId: AuthenticationTypeId.Passkey, FailureTypeId: null, UserRegistryId: user.id, CreatedUser: 'pk-button' }]);
    await page.unroute('**/api/Authentication/ByPasskey');

    // The same assertion again, at either node: its challenge is used (14, counted toward the lockout).
    for (const node of [a, b]) {
      const replay = await fetch(`${node.url}/api/Authentication/ByPasskey`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: forwarded });
      expect(replay.status).toBe(401);
    }
    expect((await loginRows('pk-button')).slice(1).map((r) => r.FailureTypeId)).toEqual([14, 14]);
    expect(await failedCount(user.id)).toBe(2);
  });

  it('refuses a bogus signature (14), missing user verification (15) and a counter that went back (15, WARN)', async () => {
    const user = await insertUser(a, { name: 'pk-refusals', password: PASSWORD });
    const page = await session();
    const authenticator = await VirtualAuthenticator.add(page);
    expect(await register(page, 'pk-refusals', 'Phone')).toContain('is added');
    const [credential] = await authenticator.credentials();

    // Another private key under the same credential id: the signature cannot verify.
    const forged = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64');
    await authenticator.rewrite(credential.credentialId, { privateKey: forged });
    await signInByAutofill(page);
    expect(await loginError(page)).toMatch(/passkey failed/);
    await authenticator.rewrite(credential.credentialId, { privateKey: credential.privateKey });

    // An authenticator that does not verify its user, and a client that asked it not to.
    await authenticator.setUserVerified(false);
    await page.route('**/api/Authentication/Passkey/Options', async (route) => {
      const response = await route.fetch();
      const json = await response.json();
      json.options.userVerification = 'discouraged';
      await route.fulfill({ response, json });
    });
    await signInByAutofill(page);
    expect(await loginError(page)).toMatch(/passkey failed/);
    await page.unroute('**/api/Authentication/Passkey/Options');
    await authenticator.setUserVerified(true);

    // One good sign-in moves the stored counter forward; then the authenticator's counter is set back.
    await signInByAutofill(page);
    await page.waitForURL((url) => url.pathname === '/Account/Sessions');
    const [{ SignCount: stored }] = await a.db.query<{ SignCount: string }>(`SELECT "SignCount" FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(Number(stored)).toBeGreaterThan(0);
    await authenticator.rewrite(credential.credentialId, { signCount: 0 });
    await signInByAutofill(page);
    expect(await loginError(page)).toMatch(/passkey failed/);
    const [{ SignCount: after }] = await a.db.query<{ SignCount: string }>(`SELECT "SignCount" FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(after).toBe(stored);
    expect(logs.count('warn', /signature counter \d+ is not above the stored/)).toBe(1);

    expect((await loginRows('pk-refusals')).map((r) => r.FailureTypeId)).toEqual([14, 15, null, 15]);
  });

  it('asks a user with a passkey for it after the password (202), and the row and session stay password (1)', async () => {
    const user = await insertUser(a, { name: 'pk-second', password: PASSWORD });
    const page = await session();
    const authenticator = await VirtualAuthenticator.add(page);
    expect(await register(page, 'pk-second', 'Key')).toContain('is added');
    const [credential] = await authenticator.credentials();
    await authenticator.remove();

    // This browser's page offers no passkey sign-in (its options are held back), so the password goes first.
    await page.route('**/api/Authentication/Passkey/Options', (route) => route.abort());
    await forgetSession(page);
    await page.goto(`${a.origin}/Account/Login?returnUrl=%2FAccount%2FSessions`);
    await page.locator('#login-form').waitFor();
    const device = await VirtualAuthenticator.add(page);
    await authenticator.copyTo(device, credential);
    const prompt = page.waitForResponse((r) => r.url().endsWith('/ByUserNamePassword') && r.status() === 202);
    const final = page.waitForResponse((r) => r.url().endsWith('/ByUserNamePassword') && r.status() !== 202);
    await page.fill('input[name="userName"]', 'pk-second');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('#login-form button[type="submit"]');
    const body = await (await prompt).json();
    expect(body).toMatchObject({ mfaRequired: true, methods: ['passkey'] });
    expect(body.options.allowCredentials).toHaveLength(1);
    expect((await final).status()).toBe(200);
    await page.waitForURL((url) => url.pathname === '/Account/Sessions');
    const rows = await a.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null }>(
      `SELECT "AuthenticationTypeId", "FailureTypeId" FROM "UserLogin" WHERE "UserRegistryId" = $1 ORDER BY "Id"`,
      [user.id],
    );
    // The registration's own sign-in, then this one: both password (1), both successes.
    expect(rows).toEqual([
      { AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, FailureTypeId: null },
      { AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, FailureTypeId: null },
    ]);
    await page.locator('#sessions[data-loaded="true"]').waitFor();
    expect(await page.locator('.current-session').innerText()).toContain('Username and Password');
  });

  it('refuses another user\'s second-factor challenge answered by this user\'s genuine passkey (cross-user, 14)', async () => {
    const victim = await insertUser(a, { name: 'pk-victim', password: PASSWORD });
    const attacker = await insertUser(a, { name: 'pk-attacker', password: PASSWORD });
    await a.db.query(
      `INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "Name") VALUES ($1, $2, $3, 'victim key')`,
      [victim.id, Buffer.from('victim-credential-id-0123456789'), Buffer.from('not a key')],
    );
    const page = await session();
    const authenticator = await VirtualAuthenticator.add(page);
    expect(await register(page, 'pk-attacker', 'Mine')).toContain('is added');
    const [credential] = await authenticator.credentials();
    await authenticator.remove();
    // The victim's 202: a challenge bound to the victim.
    const victimPrompt = await fetch(`${a.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'pk-victim', password: PASSWORD }),
    }).then((r) => r.json());
    expect(victimPrompt.methods).toEqual(['passkey']);
    // The attacker's own 202 is swapped for the victim's challenge; the attacker's authenticator signs it.
    await page.route('**/api/Authentication/Passkey/Options', (route) => route.abort());
    await page.route('**/api/Authentication/ByUserNamePassword', async (route) => {
      const response = await route.fetch();
      if (response.status() !== 202) return route.fulfill({ response });
      const json = await response.json();
      await route.fulfill({ response, json: { ...json, challengeId: victimPrompt.challengeId, options: { ...json.options, challenge: victimPrompt.options.challenge } } });
    });
    await forgetSession(page);
    await page.goto(`${a.origin}/Account/Login`);
    await page.locator('#login-form').waitFor();
    const device = await VirtualAuthenticator.add(page);
    await authenticator.copyTo(device, credential);
    await page.fill('input[name="userName"]', 'pk-attacker');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('#login-form button[type="submit"]');
    expect(await loginError(page)).toMatch(/Sign-in failed/);
    const rows = await a.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null }>(
      `SELECT "AuthenticationTypeId", "FailureTypeId" FROM "UserLogin" WHERE "UserRegistryId" = $1 ORDER BY "Id" DESC LIMIT 1`,
      [attacker.id],
    );
    expect(rows).toEqual([{ AuthenticationTypeId: AuthenticationTypeId.UserNamePassword, FailureTypeId: FailureTypeId.PasskeyAssertionInvalid }]);
    // And the victim's challenge is gone with it.
    expect(await a.db.query(`SELECT 1 FROM "PasskeyChallenge" WHERE "Id" = $1`, [victimPrompt.challengeId])).toEqual([]);
  });

  it('refuses a synced passkey under PasskeyDeviceBoundOnly, at sign-in (15) and at registration (400)', async () => {
    const boundOnly = await startPasskeyNode({ db: a.db, env: { PasskeyDeviceBoundOnly: 'True' } });
    try {
      await insertUser(a, { name: 'pk-synced', password: PASSWORD });
      const page = await session();
      await VirtualAuthenticator.add(page, { backupEligible: true, backupState: true });
      expect(await register(page, 'pk-synced', 'Synced')).toContain('is added');
      expect(await page.locator('#passkey-list .badge').allInnerTexts()).toContain('Synced');
      await signInByAutofill(page, boundOnly);
      expect(await loginError(page)).toMatch(/passkey failed/);
      expect((await loginRows('pk-synced')).map((r) => r.FailureTypeId)).toEqual([15]);

      await insertUser(a, { name: 'pk-synced-2', password: PASSWORD });
      const other = await session();
      await VirtualAuthenticator.add(other, { backupEligible: true });
      expect(await register(other, 'pk-synced-2', 'Synced', boundOnly)).toMatch(/Synced passkeys are not accepted/);
    } finally {
      await boundOnly.close();
    }
  });

  it('refuses an expired challenge (injected clock) and removes passkeys from the Users page', async () => {
    const user = await insertUser(a, { name: 'pk-expiry', password: PASSWORD });
    await insertUser(a, { name: 'pk-admin', password: PASSWORD, landlord: true });
    const page = await session();
    await VirtualAuthenticator.add(page);
    expect(await register(page, 'pk-expiry', 'Key')).toContain('is added');
    await page.route('**/api/Authentication/ByPasskey', async (route) => {
      a.clock.advance(2 * 60_000 + 1000);
      b.clock.advance(2 * 60_000 + 1000);
      await route.continue();
    });
    await signInByAutofill(page);
    expect(await loginError(page)).toMatch(/passkey failed/);
    expect((await loginRows('pk-expiry')).map((r) => r.FailureTypeId)).toEqual([14]);

    const admin = await session();
    await signInThroughPage(admin, a.origin, 'pk-admin', PASSWORD, '/Administration/Security/Users?user=pk-expiry');
    await admin.locator('#passkeys[data-loaded="true"][data-count="1"]').waitFor();
    await screenshot(admin, 'passkeys-users-1366');
    await admin.click('#passkey-list button.remove-passkey');
    await confirmInPage(admin, /Remove the passkey/);
    await admin.locator('#passkeys[data-loaded="true"][data-count="0"]').waitFor();
    const [row] = await a.db.query<{ Deleted: boolean }>(`SELECT "Deleted" FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(row.Deleted).toBe(true);
    await admin.setViewportSize({ width: 390, height: 844 });
    await screenshot(admin, 'passkeys-users-390');
  });
});

/**
 * PasskeyUserVerification=preferred with the passcode on, in Chromium: an authenticator without user
 * verification signs in by autofill, the page then asks for the passcode (ByPasskey's 202) and sends
 * it with a fresh assertion. Also what the virtual authenticator does with a counter of 0.
 */
describe('a passkey without user verification, then the passcode, in Chromium (contract 20, preferred)', () => {
  let c: PasskeyNode;
  let chromium: Chromium;
  const problems: string[] = [];

  beforeAll(async () => {
    c = await startPasskeyNode({ env: { PasskeyUserVerification: 'preferred', EnableMultifactorAuthentication: 'True' } });
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await c?.close();
  });

  it('asks for the passcode after the passkey and signs in with both; the authenticator counts up from 0', async () => {
    const user = await insertUser(c, { name: 'pk-preferred', password: PASSWORD });
    // A credential placed in the authenticator and in UserPasskey (no registration: the password would need the passcode too).
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credentialId = randomBytes(32);
    await c.db.query(
      `INSERT INTO "UserPasskey" ("UserRegistryId", "CredentialId", "PublicKey", "SignCount", "Name", "CreatedDate") VALUES ($1, $2, $3, 0, 'Key', now())`,
      [user.id, credentialId, cosePublicKey(publicKey)],
    );
    const { context, page } = await openBrowserPage(chromium);
    try {
      watchPage(page, problems);
      // An authenticator that does not verify its user, and a client that does not ask it to: what
      // "preferred" allows (the options as served say "preferred"; the browser, not the server, decides).
      const authenticator = await VirtualAuthenticator.add(page, { isUserVerified: false });
      await page.route('**/api/Authentication/Passkey/Options', async (route) => {
        const response = await route.fetch();
        const json = await response.json();
        expect(json.options.userVerification).toBe('preferred');
        json.options.userVerification = 'discouraged';
        await route.fulfill({ response, json });
      });
      await authenticator.cdp.send('WebAuthn.addCredential', {
        authenticatorId: authenticator.id,
        credential: {
          credentialId: credentialId.toString('base64'),
          isResidentCredential: true,
          rpId: 'localhost',
          privateKey: privateKey.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
          userHandle: Buffer.from(`tm-user-${user.id}`).toString('base64'),
          signCount: 0,
        },
      });
      await page.goto(`${c.origin}/Account/Login?returnUrl=%2FAccount%2FSessions`);
      // The page's autofill request is answered at once by the authenticator; ByPasskey answers 202.
      await page.getByTestId('passkey-passcode').waitFor();
      expect(await page.locator('#step-mfa').isVisible()).toBe(true);
      expect(await page.context().cookies()).toEqual([]);
      await screenshot(page, 'passkeys-preferred-passcode-1366');
      await page.fill('input[name="mfa"]', '12345678');
      await page.click('#login-form button[type="submit"]');
      await page.waitForURL((url) => url.pathname === '/Account/Sessions');
      const rows = await c.db.query<{ AuthenticationTypeId: number; FailureTypeId: number | null }>(
        `SELECT "AuthenticationTypeId", "FailureTypeId" FROM "UserLogin" WHERE "UserRegistryId" = $1 ORDER BY "Id"`,
        [user.id],
      );
      expect(rows).toEqual([{ AuthenticationTypeId: 4, FailureTypeId: null }]);
      // Issue 31: Chromium's virtual authenticator, given signCount 0, counts before it signs: its two
      // assertions said 1 and 2, never 0 (a synced passkey's 0 is shown by the API test instead).
      const [credential] = await authenticator.credentials();
      const [{ SignCount: stored }] = await c.db.query<{ SignCount: string }>(`SELECT "SignCount" FROM "UserPasskey" WHERE "UserRegistryId" = $1`, [user.id]);
      expect({ authenticator: credential.signCount, stored: Number(stored) }).toEqual({ authenticator: 2, stored: 2 });
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
