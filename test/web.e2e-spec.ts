import { readFileSync } from 'node:fs';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { confirmInPage, launchBrowser, openBrowserPage, screenshot, signInThroughPage, submitSignIn } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, insertUser } from './helpers/users';
import { LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const GENERIC = /Sign-in failed\. Check your user name and password/;

/**
 * The pages in a real headless Chromium against the real service (contract 11, service.md 4.1):
 * what a user sees and does, with the API answers and rows behind it.
 */
describe('web pages in a browser', () => {
  let t: TestApp;
  let chromium: Chromium;
  let admin: { context: BrowserContext; page: Page };
  const problems: string[] = [];

  /** Records script errors and CSP refusals of a page; the last test asserts there were none. */
  const watch = (page: Page) => {
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`${page.url()}: ${message.text()}`);
    });
    return page;
  };

  const session = async (_who: string) => {
    const s = await openBrowserPage(chromium);
    watch(s.page);
    return s;
  };

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    admin = await session('admin');
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('sends a browser without a session to sign in, and serves every page with the strict headers', async () => {
    const http = new Browser(t.url, {});
    const page = await http.get('/Administration/Security/Users?user=x', { accept: 'text/html' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe(`/Account/Login?returnUrl=${encodeURIComponent('/Administration/Security/Users?user=x')}`);
    expect((await http.get('/')).headers.get('location')).toBe('/Account/Login?returnUrl=%2F');
    expect((await http.get('/swagger/index.html', { accept: 'text/html' })).headers.get('location')).toMatch(/^\/Account\/Login\?returnUrl=/);

    for (const path of ['/Account/Login', '/Account/Logout']) {
      const res = await http.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
      expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
      expect(res.headers.get('content-security-policy')).toMatch(/style-src 'self'(;|$)/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('referrer-policy')).toBe('same-origin');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      // No inline script anywhere: every <script> loads a file.
      expect(res.text.match(/<script[^>]*>/g)!.every((tag) => / src="\/assets\/[\w-]+\.js"/.test(tag))).toBe(true);
      expect(res.text).not.toMatch(/ on\w+=|style=/);
    }
    const asset = await http.get('/assets/login.js');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
    expect((await http.get('/assets/..%2Fpackage.json')).status).toBe(404);
    expect((await http.get('/api/Authentication/Schemes')).json).toEqual({ password: true, oauth: false, negotiate: false, mfa: false });
  });

  it('first sign-in of the seeded Administrator: forced password change, then back to the page asked for', async () => {
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/Users`);
    await page.waitForURL(/\/Account\/Login\?returnUrl=%2FAdministration%2FSecurity%2FUsers$/);
    await page.locator('#login-form').waitFor();
    await screenshot(page, 'login');

    await submitSignIn(page, 'Administrator', 'Administrator');
    await page.getByTestId('password-change-required').waitFor();
    await expect(page.locator('input[name="newPassword"]').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('password-rules').innerText()).resolves.toMatch(/12 to 128 characters/);

    // The browser checks the rules before anything is sent.
    await page.fill('input[name="newPassword"]', 'short');
    await page.fill('input[name="repeatNewPassword"]', 'short');
    await page.click('#login-form button[type="submit"]');
    await expect(page.getByTestId('login-error').innerText()).resolves.toMatch(/12 to 128 characters/);
    await screenshot(page, 'login-password-change');

    await page.fill('input[name="newPassword"]', ADMIN_PASSWORD);
    await page.fill('input[name="repeatNewPassword"]', ADMIN_PASSWORD);
    await page.click('#login-form button[type="submit"]');
    await page.waitForURL(`${t.url}/Administration/Security/Users`);
    await page.locator('#users tr[data-user="Administrator"]').waitFor();
    await expect(page.locator('#countdown').innerText()).resolves.toMatch(/^Session 1[45]:\d\d$/);
    await expect(page.locator('#current-user').innerText()).resolves.toBe('Administrator');
    // A landlord sees every section (the menu is drawn whole once the session is read).
    await page.locator('#nav .nav-who').waitFor({ state: 'attached' });
    const nav = await page.locator('#nav').innerText();
    for (const label of ['Users', 'User Login', 'Archiver Warning', 'Capture Queue Health', 'Model Invoke Warning']) expect(nav).toContain(label);

    const [row] = await t.db.query<{ WirePasswordHash: boolean; PasswordExpiryDate: Date }>(
      `SELECT "WirePasswordHash", "PasswordExpiryDate" FROM "UserRegistry" WHERE "Name" = 'Administrator'`,
    );
    expect(row.PasswordExpiryDate.getTime()).toBeGreaterThan(t.clock.nowMs());
  });

  it('a locked account and a wrong password get the same generic message', async () => {
    await insertUser(t, { name: 'locked.user', password: STRONG });
    await t.db.query(`UPDATE "UserRegistry" SET "PasswordLocked" = true, "PasswordLockedDate" = now() WHERE "Name" = 'locked.user'`);
    await insertUser(t, { name: 'wrong.password', password: STRONG });
    const { page, context } = await session('anonymous');
    await page.goto(`${t.url}/Account/Login`);

    await submitSignIn(page, 'locked.user', STRONG);
    const locked = await page.getByTestId('login-error').innerText();
    expect(locked).toMatch(GENERIC);
    await screenshot(page, 'login-failed');

    await submitSignIn(page, 'wrong.password', 'Not-the-password-1');
    await page.getByTestId('login-error').filter({ hasText: GENERIC }).waitFor();
    expect(await page.getByTestId('login-error').innerText()).toBe(locked);
    expect(new URL(page.url()).pathname).toBe('/Account/Login');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('authentication-jwt');
    await context.close();
  });

  it('shows a failed OAuth return as a generic message, and never follows a returnUrl off the site', async () => {
    await insertUser(t, { name: 'returner', password: STRONG });
    const { page, context } = await session('returner');
    await page.goto(`${t.url}/Account/Login?error=access_denied`);
    await expect(page.getByTestId('login-error').innerText()).resolves.toMatch(/identity provider did not succeed/);
    await expect(page.locator('body').innerText()).resolves.not.toContain('access_denied');

    await page.goto(`${t.url}/Account/Login?returnUrl=${encodeURIComponent('//evil.example/x')}`);
    await submitSignIn(page, 'returner', STRONG);
    await page.waitForURL(`${t.url}/`);
    await expect(page.locator('.lead').innerText()).resolves.toBe('Welcome, returner.');
    await context.close();
  });

  it('Generate API Key shows the value once; the key works over HTTP; Revoke stops it', async () => {
    await insertUser(t, { name: 'integration', password: STRONG, tenantName: 'Tenant A' });
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/Users`);
    await page.click('#users tr[data-user="integration"]');
    await expect(page.locator('#user-name').innerText()).resolves.toBe('integration');
    await page.click('#generate-api-key');
    await page.fill('#api-key-name', 'Nightly export');
    await page.fill('#api-key-description', 'Pulls the archive every night');
    await page.click('#save-api-key');
    const value = await page.locator('#api-key-value').inputValue();
    expect(value).toMatch(/^[0-9A-Za-z]{40,}$/);
    await expect(page.getByTestId('api-key-once').innerText()).resolves.toMatch(/will not be shown again/);
    const row = page.locator(`#api-key-list tr[data-key-display="${value.slice(0, 8)}"]`);
    await expect(row.innerText()).resolves.toMatch(/Nightly export[\s\S]*Pulls the archive every night[\s\S]*Never/);
    await screenshot(page, 'users-api-key');

    const bySession = await fetch(`${t.url}/api/Authentication/Session`, { headers: { 'x-api-key': value } });
    expect(bySession.status).toBe(200);
    expect(await bySession.json()).toMatchObject({ userName: 'integration', authenticationType: 'ApiKey' });
    const [stored] = await t.db.query<{ ApiKey: string }>(`SELECT "ApiKey" FROM "UserRegistryApiKey" WHERE "Name" = 'Nightly export'`);
    expect(stored.ApiKey).not.toBe(value);

    // Opened again, the page can only show the display identifier.
    await page.reload();
    await page.click('#users tr[data-user="integration"]');
    await row.waitFor();
    await expect(page.locator('body').innerText()).resolves.not.toContain(value);

    await row.locator('button.revoke-key').click();
    await confirmInPage(page, /Revoke the API key “Nightly export”\?/);
    await page.locator('#api-key-messages').filter({ hasText: 'is revoked' }).waitFor();
    await row.waitFor({ state: 'detached' });
    const afterRevoke = await fetch(`${t.url}/api/Authentication/Session`, { headers: { 'x-api-key': value } });
    expect(afterRevoke.status).toBe(401);
  });

  it('Revoke Sessions ends the session of another browser', async () => {
    await insertUser(t, { name: 'carol', password: STRONG });
    const carol = await session('carol');
    await signInThroughPage(carol.page, t.url, 'carol', STRONG, '/Account/ChangePassword');
    expect(new URL(carol.page.url()).pathname).toBe('/Account/ChangePassword');
    // A tenant user without rights sees no administration menu, and a telemetry page refuses her.
    await carol.page.locator('#nav .nav-who').waitFor({ state: 'attached' });
    await expect(carol.page.locator('#nav').innerText()).resolves.not.toMatch(/Users|Archiver/);
    const refused = await carol.page.goto(`${t.url}/Administration/Performance/ArchiverWarning`);
    expect(refused!.status()).toBe(403);
    await carol.page.getByTestId('forbidden').waitFor();

    t.clock.advance(1000);
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/Users?user=carol`);
    await expect(page.locator('#user-name').innerText()).resolves.toBe('carol');
    await page.click('#revoke-sessions');
    await confirmInPage(page, /End every session of carol\?/);
    await page.locator('#user-messages .notice').waitFor();
    await expect(page.locator('#user-messages').innerText()).resolves.toBe('Every session of carol has been ended.');

    // Carol's browser lands on the sign-in page, told why.
    await carol.page.goto(`${t.url}/`);
    await carol.page.waitForURL(/\/Account\/Login\?returnUrl=%2F&session=ended$/);
    await expect(carol.page.getByTestId('session-ended').innerText()).resolves.toMatch(/Your session was ended: .*an administrator ended your sessions\. Sign in again/);
    await screenshot(carol.page, 'login-session-ended');
    const rows = await t.db.query<{ ReasonId: number; CutByUser: string }>(`SELECT "ReasonId", "CutByUser" FROM "UserLogout" WHERE "CreatedUser" = 'carol'`);
    expect(rows).toEqual([expect.objectContaining({ ReasonId: LogoutReasonId.AdministratorRevoked, CutByUser: 'Administrator' })]);
    // The administrator's own session is untouched.
    await page.reload();
    await expect(page.locator('#current-user').innerText()).resolves.toBe('Administrator');
    await carol.context.close();
  });

  it('deletes a user from the Users page: gone from the list, sessions ended, sign-in refused', async () => {
    const { id } = await insertUser(t, { name: 'dora', password: STRONG });
    const dora = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'dora', password: STRONG }),
    });
    const token = (await dora.json()).token as string;
    t.clock.advance(1000);
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/Users?user=dora`);
    await expect(page.locator('#user-name').innerText()).resolves.toBe('dora');
    await page.click('#delete-user');
    await confirmInPage(page, /Delete dora\?/);
    await page.locator('#user-detail .notice').filter({ hasText: 'dora is deleted.' }).waitFor();
    await expect(page.locator('#users tr[data-user="dora"]').count()).resolves.toBe(0);
    const [row] = await t.db.query<{ Deleted: boolean }>(`SELECT "Deleted" FROM "UserRegistry" WHERE "Id" = $1`, [id]);
    expect(row.Deleted).toBe(true);
    const session = await fetch(`${t.url}/api/Authentication/Session`, { headers: { authorization: `Bearer ${token}` } });
    expect(session.status).toBe(401);
    const again = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userName: 'dora', password: STRONG }),
    });
    expect(again.status).toBe(401);
  });

  it('creates a user and resets a password as a wire hash computed in the browser; the user then signs in', async () => {
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/Users`);
    await page.click('#new-user');
    await page.fill('#new-user-name', 'erin');
    await page.fill('#new-user-email', 'erin@example.test');
    await page.selectOption('#new-user-role', { label: 'Administrator' });
    await page.fill('#new-user-password', STRONG);
    await page.fill('#new-user-repeat', STRONG);
    await page.uncheck('#new-user-must-change');
    await page.click('#create-user');
    await expect(page.locator('#user-name').innerText()).resolves.toBe('erin');
    await screenshot(page, 'users-detail');

    const secret = 'Wire-Hashed-Secret-42';
    await page.fill('#reset-password', secret);
    await page.fill('#reset-repeat', secret);
    await page.check('#reset-wire');
    await page.uncheck('#reset-must-change');
    await page.click('#reset-password-submit');
    await page.getByText('The password is reset').waitFor();
    const [erin] = await t.db.query<{ WirePasswordHash: boolean }>(`SELECT "WirePasswordHash" FROM "UserRegistry" WHERE "Name" = 'erin'`);
    expect(erin.WirePasswordHash).toBe(true);

    const http = new Browser(t.url);
    const plain = await http.post('/api/Authentication/ByUserNamePassword', { userName: 'erin', password: secret });
    expect(plain.status).toBe(401);
    const erinBrowser = await session('erin');
    await signInThroughPage(erinBrowser.page, t.url, 'erin', secret);
    await expect(erinBrowser.page.locator('.lead').innerText()).resolves.toBe('Welcome, erin.');
    await erinBrowser.context.close();
  });

  it('changes the signed-in user\'s own password', async () => {
    await insertUser(t, { name: 'dave', password: STRONG });
    const dave = await session('dave');
    await signInThroughPage(dave.page, t.url, 'dave', STRONG, '/Account/ChangePassword');
    const next = 'Brand-New-Passw0rd';
    await dave.page.fill('input[name="password"]', STRONG);
    await dave.page.fill('input[name="newPassword"]', next);
    await dave.page.fill('input[name="repeatNewPassword"]', next);
    await screenshot(dave.page, 'change-password');
    await dave.page.click('#change-password-form button[type="submit"]');
    await dave.page.getByTestId('password-changed').waitFor();
    const http = new Browser(t.url);
    expect((await http.post('/api/Authentication/ByUserNamePassword', { userName: 'dave', password: next })).status).toBe(200);
    await dave.context.close();
  });

  it('a telemetry page shows the statistics and a histogram of inserted rows, sorts, filters and exports CSV', async () => {
    const now = t.clock.nowMs();
    for (let i = 1; i <= 20; i++) {
      await t.db.query(
        `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
         VALUES ($1, '7c1d2f5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f', $2, $3, $4, $1, 'node-1')`,
        // Durations 1 000 to 20 000 µs, in an order unlike the dates, so sorting shows.
        [new Date(now - i * 60_000), i % 2 ? 'Fraud scoring' : '=cmd|calc', i <= 5 ? 4 : 3, (((i * 7) % 20) + 1) * 1000],
      );
    }
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Performance/ArchiverWarning`);
    // The histograms sit behind a toggle, under the chart over time.
    await page.locator('#statistics-toggle > summary').click();
    const bars = page.locator('[data-testid="histogram-durationMicroseconds"] rect.bar');
    await bars.first().waitFor();
    expect(await bars.count()).toBe(10);
    const frequencies = await bars.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-frequency'))));
    expect(frequencies).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 2]);
    await expect(page.getByTestId('statistics-durationMicroseconds').innerText()).resolves.toMatch(/MIN\s*1 ms[\s\S]*MAX\s*20 ms[\s\S]*MEAN\s*10.5 ms/i);
    await expect(page.locator('#grid-summary').innerText()).resolves.toMatch(/^20 matching rows/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(page.locator('#grid tbody').innerText()).resolves.toMatch(/BulkCopyArchiveBuffer/);
    await screenshot(page, 'archiver-warning');

    // Sort by duration, ascending then descending.
    await page.click('th button[data-field="durationMicroseconds"]');
    await page.waitForURL(/sortField=durationMicroseconds&sortDirection=asc/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(page.locator('#grid tbody tr:first-child td:nth-child(6)').innerText()).resolves.toBe('1 ms');
    await page.click('th button[data-field="durationMicroseconds"]');
    await page.waitForURL(/sortField=durationMicroseconds&sortDirection=desc/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(page.locator('#grid tbody tr:first-child td:nth-child(6)').innerText()).resolves.toBe('20 ms');

    // Filter on the stage: BulkCopyArchiveBuffer (4) holds the five shortest.
    await page.selectOption('select[name="stageId"]', '4');
    await page.click('#grid-toolbar button[type="submit"]');
    await page.waitForURL(/stageId=4/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    await expect(page.locator('#grid-summary').innerText()).resolves.toMatch(/^5 matching rows/);

    // CSV export of the same query, with spreadsheet formulas neutralised.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    expect(csv[0].split(',')).toEqual(expect.arrayContaining(['durationMicroseconds', 'stageName', 'entityAnalysisModelName']));
    expect(csv).toHaveLength(6);
    expect(csv.slice(1).every((line) => line.includes('BulkCopyArchiveBuffer'))).toBe(true);
    expect(csv.join('\n')).toContain("'=cmd|calc");
    expect(csv.join('\n')).toContain('15000');
  });

  it('every grid page loads its rows through the same grid, with its own toolbar', async () => {
    await t.db.query(`INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance") VALUES (3, 12, 0, $1, 'node-1'), (1, 0, 4, $1, 'node-1')`, [
      new Date(t.clock.nowMs() - 60_000),
    ]);
    const { page } = admin;
    const pages: [string, string[]][] = [
      ['Performance/ArchiverStagePerformanceCounter', ['search', 'stageId', 'entityAnalysisModelGuid']],
      ['Performance/CaseCreationStagePerformanceCounter', ['stageId']],
      ['Performance/CaseCreationWarning', ['stageId', 'search']],
      ['Performance/CaptureQueueHealth', ['queueId']],
      ['Logs/ModelInvokeWarning', ['search', 'entityAnalysisModelGuid']],
      ['Security/UserLogout', ['search', 'reasonId']],
      ['Security/UserLogin', ['search', 'failed', 'failureTypeId']],
    ];
    for (const [path, filters] of pages) {
      await page.goto(`${t.url}/Administration/${path}`);
      await page.locator('#grid-summary[data-state="ready"]').waitFor();
      expect(await page.locator('#content .notice-error').count()).toBe(0);
      const names = await page.locator('#grid-toolbar [name]').evaluateAll((els) => els.map((e) => e.getAttribute('name')));
      expect(names.sort()).toEqual(['from', 'to', ...filters].sort());
    }
    // Capture Queue Health shows queue names and a histogram per statistics column.
    await page.goto(`${t.url}/Administration/Performance/CaptureQueueHealth`);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    const queues = await page.locator('#grid tbody').innerText();
    expect(queues).toContain('ArchiverWarning');
    expect(queues).toContain('ModelInvokeWarning');
    expect(await page.locator('[data-testid="histogram-queueDepth"] rect.bar').count()).toBe(10);
    expect(await page.locator('[data-testid="histogram-droppedCount"] rect.bar').count()).toBe(10);
    await screenshot(page, 'capture-queue-health');
  });

  it('a tenant administrator sees the Security pages but not telemetry', async () => {
    await insertUser(t, { name: 'tenant.admin', password: STRONG, tenantName: 'Tenant B', permissions: [Permission.ReadWriteSecurityUser] });
    await insertUser(t, { name: 'tenant.b.user', password: STRONG, tenantName: 'Tenant B' });
    const { page, context } = await session('tenant.admin');
    await signInThroughPage(page, t.url, 'tenant.admin', STRONG, '/Administration/Security/Users');
    // The menu is drawn whole once the session is read: read it then, not before.
    await page.locator('#nav .nav-who').waitFor({ state: 'attached' });
    const nav = await page.locator('#nav').innerText();
    expect(nav).toContain('Users');
    expect(nav).not.toMatch(/Archiver|Capture Queue|Model Invoke/);
    await page.locator('#users tr[data-user="tenant.b.user"]').waitFor();
    expect(await page.locator('#users tr[data-user="Administrator"]').count()).toBe(0);
    const refused = await page.goto(`${t.url}/Administration/Logs/ModelInvokeWarning`);
    expect(refused!.status()).toBe(403);
    await context.close();
  });

  it('the User Login grid lists sign-ins with their codes by name', async () => {
    const { page } = admin;
    await page.goto(`${t.url}/Administration/Security/UserLogin`);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    await page.fill('input[name="search"]', 'locked.user');
    await page.click('#grid-toolbar button[type="submit"]');
    await page.waitForURL(/search=locked.user/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    const text = await page.locator('#grid tbody').innerText();
    expect(text).toMatch(/Failed/);
    expect(text).not.toMatch(/carol/);
    await screenshot(page, 'user-login');
    await page.goto(`${t.url}/Administration/Security/UserLogout`);
    await page.locator('#grid tbody tr', { hasText: 'carol' }).first().waitFor();
    await screenshot(page, 'user-logout');
  });

  it('sign-out: a GET only asks; the button signs out', async () => {
    const { page, context } = admin;
    await page.goto(`${t.url}/`);
    await expect(page.locator('.lead').innerText()).resolves.toBe('Welcome, Administrator.');
    await screenshot(page, 'home');
    await page.goto(`${t.url}/Account/Logout`);
    await page.locator('body[data-ready="true"]').waitFor();
    await expect(page.locator('#content').innerText()).resolves.toMatch(/signed in as Administrator/);
    await expect(page.locator('#logout-scope').innerText()).resolves.toMatch(/ends every session of your account/);
    const still = await page.evaluate(async () => (await fetch('/api/Authentication/Session')).status);
    expect(still).toBe(200);
    await screenshot(page, 'logout-confirm');

    await page.click('#confirm-logout');
    await page.getByTestId('logged-out').waitFor();
    await expect(page.getByTestId('logout-warning').count()).resolves.toBe(0);
    await screenshot(page, 'logged-out');
    expect((await context.cookies()).map((c) => c.name)).not.toContain('authentication-jwt');
    await page.goto(`${t.url}/Administration/Security/Users`);
    await page.waitForURL(/\/Account\/Login\?returnUrl=/);
  });

  it('sign-out warns when the service could not record the end of the session', async () => {
    await insertUser(t, { name: 'frank', password: STRONG });
    const frank = await session('frank');
    await signInThroughPage(frank.page, t.url, 'frank', STRONG, '/Account/Logout');
    expect(new URL(frank.page.url()).pathname).toBe('/Account/Logout');
    await t.db.query(`
      CREATE FUNCTION web_refuse_frank() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW."Name" = 'frank' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$`);
    await t.db.query(`CREATE TRIGGER web_refuse_frank BEFORE UPDATE ON "UserRegistry" FOR EACH ROW EXECUTE FUNCTION web_refuse_frank()`);
    try {
      await frank.page.click('#confirm-logout');
      await frank.page.getByTestId('logged-out').waitFor();
      await expect(frank.page.getByTestId('logout-warning').innerText()).resolves.toMatch(/could not record the end of the session/);
      await screenshot(frank.page, 'logout-warning');
      expect((await frank.context.cookies()).map((c) => c.name)).not.toContain('authentication-jwt');
    } finally {
      await t.db.query(`DROP TRIGGER web_refuse_frank ON "UserRegistry"`);
      await t.db.query(`DROP FUNCTION web_refuse_frank()`);
      await frank.context.close();
    }
  });

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
