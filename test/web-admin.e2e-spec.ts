import type { Browser as Chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { confirmInPage, launchBrowser, openBrowserPage, screenshot, signInThroughPage, submitSignIn, watchPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { FailureTypeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const NORA_FIRST = 'First-Passw0rd-Nora';
const NORA = 'Chosen-Passw0rd-Nora';

/**
 * What an administrator does on the pages, in a real Chromium: least privilege from the pages alone
 * (a tenant, a role with one permission, a user in it, who then sees only what the role allows), the
 * Users page by keyboard only, the User Login filters, and the smaller courtesies (the in-page
 * confirmation, the focus after a failed sign-in, the API key history).
 */
describe('administration pages in a browser', () => {
  let t: TestApp;
  let chromium: Chromium;
  let admin: Page;
  const problems: string[] = [];

  const session = async () => {
    const s = await openBrowserPage(chromium);
    watchPage(s.page, problems);
    return s;
  };
  const ready = (page: Page) => page.locator('body[data-ready="true"]').waitFor();

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    await signInAdministrator(t);
    admin = (await session()).page;
    await signInThroughPage(admin, t.url, 'Administrator', ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('least privilege from the pages: a tenant, a role holding only permission 35, a user in it; that user sees only what the role allows', async () => {
    // A tenant.
    await admin.goto(`${t.url}/Administration/Security/Tenants`);
    await ready(admin);
    await admin.click('#new-tenant');
    await admin.fill('#new-tenant-name', 'Bank North');
    await admin.click('#create-tenant');
    await admin.locator('#tenant-messages').filter({ hasText: 'Tenant Bank North created.' }).waitFor();
    const [tenant] = await t.db.query<{ Id: number; Landlord: boolean; Active: boolean }>(`SELECT "Id", "Landlord", "Active" FROM "TenantRegistry" WHERE "Name" = 'Bank North'`);
    expect(tenant).toEqual({ Id: expect.any(Number), Landlord: false, Active: true });
    await screenshot(admin, 'admin-tenant-created');

    // A role in it with one permission, from the tenant's own link.
    await admin.click('#tenant-links a:has-text("Roles of Bank North")');
    await admin.waitForURL(`${t.url}/Administration/Security/Roles?tenant=${tenant.Id}`);
    await ready(admin);
    await admin.click('#new-role');
    await expect(admin.locator('#role-tenant option:checked').innerText()).resolves.toBe('Bank North');
    await admin.fill('#role-name', 'User administrators');
    await admin.check('#permission-35');
    expect(await admin.isChecked('#permission-34')).toBe(false);
    await admin.click('#save-role');
    await admin.locator('#role-messages').filter({ hasText: 'Role User administrators created.' }).waitFor();
    const [role] = await t.db.query<{ Id: number; TenantRegistryId: number; Permissions: number[] }>(
      `SELECT r."Id", r."TenantRegistryId", ARRAY(SELECT p."PermissionSpecificationId" FROM "RoleRegistryPermission" p WHERE p."RoleRegistryId" = r."Id") AS "Permissions"
         FROM "RoleRegistry" r WHERE r."Name" = 'User administrators'`,
    );
    expect(role).toEqual({ Id: expect.any(Number), TenantRegistryId: tenant.Id, Permissions: [Permission.ReadWriteSecurityUser] });
    await expect(admin.locator('table.roles[data-tenant="Bank North"] tr[data-role="User administrators"]').innerText()).resolves.toMatch(/Read Write Security User/);
    await screenshot(admin, 'admin-role-created');

    // A user in that role. No role is chosen in advance: least privilege is a decision.
    await admin.goto(`${t.url}/Administration/Security/Users`);
    await ready(admin);
    await admin.click('#new-user');
    await expect(admin.locator('#new-user-role').inputValue()).resolves.toBe('');
    const groups = await admin.locator('#new-user-role optgroup').evaluateAll((els) => els.map((e) => [e.getAttribute('label'), [...e.querySelectorAll('option')].map((o) => o.textContent)]));
    expect(groups).toEqual([
      ['Bank North', ['User administrators']],
      ['Landlord', ['Administrator']],
    ]);
    await admin.fill('#new-user-name', 'nora');
    await admin.fill('#new-user-password', NORA_FIRST);
    await admin.fill('#new-user-repeat', NORA_FIRST);
    await admin.click('#create-user');
    await expect(admin.locator('.messages .notice-error').innerText()).resolves.toBe('Choose a role.');
    await admin.selectOption('#new-user-role', { label: 'User administrators' });
    await expect(admin.locator('.role-hint').innerText()).resolves.toBe('Tenant Bank North. Permissions: Read Write Security User.');
    await admin.selectOption('#new-user-role', { label: 'Administrator' });
    await expect(admin.locator('.role-hint').innerText()).resolves.toMatch(/landlord tenant: its users hold every permission/);
    await admin.selectOption('#new-user-role', { label: 'User administrators' });
    expect(await admin.isChecked('#new-user-must-change')).toBe(true);
    await admin.click('#create-user');
    await expect(admin.locator('#user-name').innerText()).resolves.toBe('nora');
    // Created to be changed at the first sign-in: the page says so rather than showing an instant.
    await expect(admin.locator('#password-expires').innerText()).resolves.toBe('At next sign-in (must be changed)');
    const [nora] = await t.db.query<{ RoleRegistryId: number }>(`SELECT "RoleRegistryId" FROM "UserRegistry" WHERE "Name" = 'nora'`);
    expect(nora.RoleRegistryId).toBe(role.Id);
    await screenshot(admin, 'admin-user-created');

    // Nora signs in: the forced change first, then only what the role allows.
    const { page, context } = await session();
    await page.goto(`${t.url}/Administration/Security/Users`);
    await page.waitForURL(/\/Account\/Login\?returnUrl=/);
    await submitSignIn(page, 'nora', NORA_FIRST);
    await page.getByTestId('password-change-required').waitFor();
    await page.fill('input[name="newPassword"]', NORA);
    await page.fill('input[name="repeatNewPassword"]', NORA);
    await page.click('#login-form button[type="submit"]');
    await page.waitForURL(`${t.url}/Administration/Security/Users`);
    await ready(page);
    const nav = await page.locator('#nav a').allInnerTexts();
    expect(nav).toEqual(['Home', 'Users', 'User Login', 'User Logout', 'Admin Changes', 'Sessions', 'Passkeys', 'Change password', 'API explorer', 'Sign out']);
    expect(await page.locator('#users tr[data-user]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-user')))).toEqual(['nora']);
    // The only role she may give is her own tenant's, and none stronger than hers.
    await page.click('#new-user');
    const offered = await page.locator('#new-user-role option').allInnerTexts();
    expect(offered).toEqual(['Choose a role…', 'User administrators']);
    await screenshot(page, 'nora-users');
    for (const path of ['/Administration/Security/Tenants', '/Administration/Security/Roles', '/Administration/Performance/ArchiverWarning', '/Administration/Logs/ModelInvokeWarning']) {
      const refused = await page.goto(`${t.url}${path}`);
      expect({ path, status: refused!.status() }).toEqual({ path, status: 403 });
      await page.getByTestId('forbidden').waitFor();
    }
    const api = await page.evaluate(async () => [(await fetch('/api/RoleRegistry')).status, (await fetch('/api/TenantRegistry')).status, (await fetch('/api/ArchiverWarning')).status]);
    expect(api).toEqual([403, 403, 403]);
    await page.goto(`${t.url}/`);
    await ready(page);
    await expect(page.locator('#content').innerText()).resolves.not.toMatch(/Performance|Logs|Tenants|Roles/);
    await screenshot(page, 'nora-home');
    await context.close();
  }, 180_000);

  it('keyboard only through the Users page: the skip link, the list, a user, an action and its confirmation', async () => {
    await insertUser(t, { name: 'kim', password: STRONG });
    const kim = new Browser(t.url);
    expect((await kim.post('/api/Authentication/ByUserNamePassword', { userName: 'kim', password: STRONG })).status).toBe(200);
    t.clock.advance(1000);
    await admin.goto(`${t.url}/Administration/Security/Users`);
    await ready(admin);
    const focused = () => admin.evaluate(() => {
      const e = document.activeElement as HTMLElement | null;
      return { id: e?.id ?? '', text: (e?.textContent ?? '').trim(), tag: e?.tagName ?? '', className: e?.className ?? '' };
    });

    // The first Tab reaches the skip link; Enter jumps over the header and navigation.
    await admin.keyboard.press('Tab');
    expect(await focused()).toMatchObject({ text: 'Skip to main content', tag: 'A' });
    await admin.keyboard.press('Enter');
    expect((await focused()).id).toBe('main');
    // Then a few Tabs reach kim in the list (no 18 Tabs through the menu first).
    let presses = 0;
    while (!((await focused()).className === 'user-link' && (await focused()).text === 'kim')) {
      await admin.keyboard.press('Tab');
      if (++presses > 8) throw new Error(`kim not reached by Tab; focus is on ${JSON.stringify(await focused())}`);
    }
    expect(presses).toBeLessThanOrEqual(8);
    await admin.keyboard.press('Enter');
    await admin.locator('#user-name', { hasText: 'kim' }).waitFor();
    expect((await focused()).id).toBe('user-name');
    await admin.waitForURL(/\?user=kim$/);

    // Tab on to Revoke sessions; Enter opens the in-page dialog with the safe choice focused.
    presses = 0;
    while ((await focused()).id !== 'revoke-sessions') {
      await admin.keyboard.press('Tab');
      if (++presses > 6) throw new Error(`Revoke sessions not reached; focus is on ${JSON.stringify(await focused())}`);
    }
    await admin.keyboard.press('Enter');
    const dialog = admin.getByTestId('confirm-dialog');
    await dialog.waitFor();
    expect(await dialog.getAttribute('aria-labelledby')).toBeTruthy();
    await expect(dialog.locator('h2').innerText()).resolves.toBe('End every session of kim?');
    expect((await focused()).text).toBe('Cancel');
    await screenshot(admin, 'users-confirm-dialog');
    // Escape cancels: nothing happens, the focus is back on the button.
    await admin.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    expect((await focused()).id).toBe('revoke-sessions');
    expect(await t.db.query(`SELECT 1 FROM "UserLogout" WHERE "CreatedUser" = 'kim'`)).toHaveLength(0);
    // Again, and this time confirm with Tab and Enter.
    await admin.keyboard.press('Enter');
    await dialog.waitFor();
    await admin.keyboard.press('Tab');
    expect((await focused()).text).toBe('End sessions');
    await admin.keyboard.press('Enter');
    await admin.locator('#user-messages').filter({ hasText: 'Every session of kim has been ended.' }).waitFor();
    expect(await t.db.query(`SELECT "ReasonId", "CutByUser" FROM "UserLogout" WHERE "CreatedUser" = 'kim'`)).toEqual([{ ReasonId: LogoutReasonId.AdministratorRevoked, CutByUser: 'Administrator' }]);
    expect((await kim.get('/api/Authentication/Session')).status).toBe(401);
  });

  it('User Logout shows when the ended session began and how long it lasted', async () => {
    // kim's session, ended in the keyboard test above, began a second before it was ended.
    const [row] = await t.db.query<{ SessionStartDate: Date }>(`SELECT "SessionStartDate" FROM "UserLogout" WHERE "CreatedUser" = 'kim'`);
    expect(row.SessionStartDate).toBeInstanceOf(Date);
    await admin.goto(`${t.url}/Administration/Security/UserLogout?search=kim`);
    await ready(admin);
    const cells = admin.locator('#grid tbody tr', { hasText: 'kim' });
    await expect(cells.locator('td[data-label="Session start"]').innerText()).resolves.toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await expect(cells.locator('td[data-label="Session length"]').innerText()).resolves.toBe('1 s');
    await screenshot(admin, 'user-logout-session-start');
  });

  it('a failed sign-in puts the focus on the message; the sign-in page has a skip link too', async () => {
    const { page, context } = await session();
    await page.goto(`${t.url}/Account/Login`);
    await ready(page);
    await submitSignIn(page, 'nobody', 'Not-the-password-1');
    await page.getByTestId('login-error').waitFor();
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('login-error');
    expect(await page.locator('a.skip-link').getAttribute('href')).toBe('#main');
    await context.close();
  });

  it('revoked API keys stay listed as history, with when and by whom', async () => {
    const { id } = await insertUser(t, { name: 'keyholder', password: STRONG });
    await admin.goto(`${t.url}/Administration/Security/Users?user=keyholder`);
    await admin.locator('#user-name', { hasText: 'keyholder' }).waitFor();
    for (const name of ['Reporting', 'Old reporting']) {
      await admin.click('#generate-api-key');
      await admin.fill('#api-key-name', name);
      await admin.click('#save-api-key');
      await admin.getByTestId('api-key-once').waitFor();
      await admin.click('button:has-text("I have copied it")');
    }
    expect(await admin.locator('#revoked-keys').count()).toBe(0);
    await admin.locator('#api-key-list tr', { hasText: 'Old reporting' }).locator('button.revoke-key').click();
    await confirmInPage(admin, /stops working at once/);
    await admin.locator('#revoked-keys').waitFor();
    await expect(admin.locator('#api-key-list tbody').innerText()).resolves.not.toContain('Old reporting');
    await expect(admin.locator('#revoked-keys summary').innerText()).resolves.toBe('Revoked keys (1)');
    await admin.click('#revoked-keys summary');
    await expect(admin.locator('#revoked-key-list tbody tr').innerText()).resolves.toMatch(/Old reporting[\s\S]*by Administrator/);
    const [row] = await t.db.query<{ DeletedUser: string }>(`SELECT "DeletedUser" FROM "UserRegistryApiKey" WHERE "UserRegistryId" = $1 AND "Name" = 'Old reporting'`, [id]);
    expect(row.DeletedUser).toBe('Administrator');
    await screenshot(admin, 'users-revoked-keys');
  });

  it('User Login: failures of one reason, a search for the reason text shown, the page number kept in the address, From after To explained', async () => {
    await insertUser(t, { name: 'lena', password: STRONG });
    const http = new Browser(t.url);
    for (let i = 0; i < 3; i++) await http.post('/api/Authentication/ByUserNamePassword', { userName: 'lena', password: `Wrong-password-${i}` });
    for (let i = 0; i < 28; i++) await http.post('/api/Authentication/ByUserNamePassword', { userName: `ghost${i}`, password: 'Whatever-123' });
    await http.post('/api/Authentication/ByUserNamePassword', { userName: 'lena', password: STRONG });
    const [{ count: mismatches }] = await t.db.query<{ count: string }>(`SELECT count(*) FROM "UserLogin" WHERE "FailureTypeId" = $1`, [FailureTypeId.PasswordMismatch]);

    await admin.goto(`${t.url}/Administration/Security/UserLogin`);
    await ready(admin);
    await admin.selectOption('select[name="failed"]', 'true');
    const offered = await admin.locator('select[name="failureTypeId"] option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(offered).toEqual(['', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', '15']);
    await admin.selectOption('select[name="failureTypeId"]', { label: 'Password did not match' });
    await admin.click('#grid-toolbar button[type="submit"]');
    await admin.waitForURL(/failed=true&failureTypeId=5/);
    await admin.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(admin.locator('#grid-summary').innerText()).resolves.toMatch(new RegExp(`^${mismatches} matching rows`));
    const reasons = await admin.locator('#grid tbody td[data-label="Failure reason"]').allInnerTexts();
    expect(reasons.length).toBe(Number(mismatches));
    expect(new Set(reasons)).toEqual(new Set(['Password did not match']));
    await screenshot(admin, 'user-login-one-reason');

    // The words shown in the grid can be searched for, though the table stores a code.
    await admin.click('#reset-filters');
    await admin.locator('#grid-summary[data-state="ready"]').waitFor();
    await admin.fill('input[name="search"]', 'did not match');
    await admin.click('#grid-toolbar button[type="submit"]');
    await admin.waitForURL(/search=did\+not\+match/);
    await admin.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(admin.locator('#grid-summary').innerText()).resolves.toMatch(new RegExp(`^${mismatches} matching rows`));

    // More than a page of rows: page 2 is in the address, and a reload comes back to it.
    await admin.fill('input[name="search"]', 'ghost');
    await admin.click('#grid-toolbar button[type="submit"]');
    await admin.waitForURL(/search=ghost/);
    await admin.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(admin.locator('#grid-summary').innerText()).resolves.toBe('28 matching rows · showing 1–25 · page 1 of 2.');
    await admin.click('#page-next');
    await admin.waitForURL(/page=2/);
    await expect(admin.locator('#grid-summary').innerText()).resolves.toBe('28 matching rows · showing 26–28 · page 2 of 2.');
    await admin.reload();
    await ready(admin);
    await expect(admin.locator('#grid-summary').innerText()).resolves.toBe('28 matching rows · showing 26–28 · page 2 of 2.');
    await expect(admin.locator('#page-status').innerText()).resolves.toBe('Page 2 of 2');
    // The fetch limit is not shown as if it were a count: it sits by the pager, named for what it does.
    await expect(admin.getByLabel('Load at most').locator('option:checked').innerText()).resolves.toBe('1,000 rows');
    expect(await admin.locator('#grid-toolbar [name="take"]').count()).toBe(0);

    // From after To: a plain sentence, and nothing is asked of the service.
    await admin.fill('input[name="from"]', '2026-11-23T12:00');
    await admin.fill('input[name="to"]', '2026-11-23T11:00');
    await admin.click('#grid-toolbar button[type="submit"]');
    await expect(admin.getByTestId('grid-error').innerText()).resolves.toBe('From must not be after To.');
    expect(await admin.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('grid-error');
  });

  it('when more rows match than are loaded, the page says so plainly instead of showing the fetch limit as a count', async () => {
    await t.db.query(
      `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed", "FailureTypeId", "RemoteIp")
       SELECT $1::timestamptz - make_interval(secs => g), 'bulk' || g, 1, true, 1, '203.0.113.7' FROM generate_series(1, 120) g`,
      [t.clock.now()],
    );
    await admin.goto(`${t.url}/Administration/Security/UserLogin?search=bulk&take=100`);
    await ready(admin);
    await expect(admin.locator('#grid-summary').innerText()).resolves.toBe('120 matching rows · showing 1–25 · page 1 of 4 · the newest 100 loaded.');
    await expect(admin.getByTestId('grid-partial').innerText()).resolves.toMatch(/Only the newest 100 of the 120 matching rows are loaded/);
    // Loading more from the pager fetches them all; the choice is kept in the address.
    await admin.selectOption('#grid-take', '1000');
    await admin.waitForURL(/search=bulk$/);
    await admin.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(admin.locator('#grid-summary').innerText()).resolves.toBe('120 matching rows · showing 1–25 · page 1 of 5.');
    expect(await admin.getByTestId('grid-partial').count()).toBe(0);
    await expect(admin.locator('#export-csv').getAttribute('href')).resolves.toMatch(/take=100000&format=csv$/);
  });

  it('the forced first change reads as what it is in the User Login grid, not as an attack', async () => {
    await insertUser(t, { name: 'newcomer', password: STRONG, expired: true });
    await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: 'newcomer', password: STRONG });
    await admin.goto(`${t.url}/Administration/Security/UserLogin?search=newcomer`);
    await ready(admin);
    const row = admin.locator('#grid tbody tr', { hasText: 'newcomer' });
    await expect(row.locator('td[data-label="Result"]').innerText()).resolves.toBe('Change required');
    await expect(row.locator('td[data-label="Failure reason"]').innerText()).resolves.toMatch(/Password expired and no new password supplied\s*Expected, not an attack/);
  });

  it('the Columns menu shows a hidden column and remembers the choice', async () => {
    await admin.goto(`${t.url}/Administration/Security/UserLogin`);
    await ready(admin);
    const headers = () => admin.locator('#grid thead th').allInnerTexts();
    expect(await headers()).not.toContain('Local address');
    await admin.click('#columns-chooser summary');
    await admin.check('input[name="column-localIp"]');
    expect(await headers()).toContain('Local address');
    await admin.reload();
    await ready(admin);
    expect(await headers()).toContain('Local address');
    await admin.click('#columns-chooser summary');
    await admin.uncheck('input[name="column-localIp"]');
    expect(await headers()).not.toContain('Local address');
  });

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
