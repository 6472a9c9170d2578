import type { Browser as Chromium, Page } from 'playwright-core';
import { launchBrowser, newSession, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { PasskeyNode, startPasskeyNode, VirtualAuthenticator } from './helpers/passkeys';
import { insertUser } from './helpers/users';

jest.setTimeout(180_000);

const PASSWORD = 'Passkey-User-Password-1!';

/** Signs in with the password through the page, opens /Account/Passkeys and adds a passkey named `name`. */
async function registerThroughPage(page: Page, t: PasskeyNode, userName: string, name: string): Promise<void> {
  await signInThroughPage(page, t.origin, userName, PASSWORD, '/Account/Passkeys');
  await page.locator('#passkeys[data-loaded="true"]').waitFor();
  await page.fill('#passkey-name', name);
  await page.click('#add-passkey');
  const said = page.locator('#passkey-messages [data-testid^="passkey-"]');
  await said.waitFor();
  expect(await said.innerText()).toContain('is added');
}

async function signOut(page: Page): Promise<void> {
  await page.context().clearCookies();
}

/** The UserLogin rows of passkey sign-ins (AuthenticationTypeId 4), oldest first. */
async function passkeyRows(t: PasskeyNode) {
  return t.db.query<{ UserRegistryId: number | null; CreatedUser: string | null; FailureTypeId: number | null }>(
    `SELECT "UserRegistryId", "CreatedUser", "FailureTypeId" FROM "UserLogin" WHERE "AuthenticationTypeId" = 4 ORDER BY "Id"`,
  );
}

describe('passkeys in Chromium with the DevTools virtual authenticator (contract 20)', () => {
  let t: PasskeyNode;
  let chromium: Chromium;
  const problems: string[] = [];

  beforeAll(async () => {
    t = await startPasskeyNode();
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });
  afterEach(() => expect(problems.splice(0)).toEqual([]));

  it('registers a passkey on /Account/Passkeys and signs in with the "Sign in with a passkey" button', async () => {
    const user = await insertUser(t, { name: 'pk-button', password: PASSWORD });
    const { context, page } = await newSession(chromium);
    watchPage(page, problems);
    const authenticator = await VirtualAuthenticator.add(page);
    await registerThroughPage(page, t, 'pk-button', 'Laptop');
    expect(await page.locator('#passkey-list tbody tr').count()).toBe(1);
    expect(await page.locator('#passkey-list .passkey-name').innerText()).toBe('Laptop');
    const [stored] = await t.db.query<{ Name: string; BackupEligible: boolean; SignCount: string }>(
      `SELECT "Name", "BackupEligible", "SignCount" FROM "UserPasskey" WHERE "UserRegistryId" = $1`,
      [user.id],
    );
    expect(stored).toMatchObject({ Name: 'Laptop', BackupEligible: false });
    expect(await authenticator.credentials()).toHaveLength(1);

    await signOut(page);
    await page.goto(`${t.origin}/Account/Login?returnUrl=%2FAccount%2FSessions`);
    await page.locator('#passkey-login').click();
    await page.waitForURL((url) => url.pathname === '/Account/Sessions');
    await page.locator('#sessions[data-loaded="true"]').waitFor();
    expect(await page.locator('.current-session').innerText()).toContain('Passkey');
    expect(await passkeyRows(t)).toEqual([{ UserRegistryId: user.id, CreatedUser: 'pk-button', FailureTypeId: null }]);
    await screenshot(page, 'passkeys-sessions-1366');
    await context.close();
  });
});
