import * as jwt from 'jsonwebtoken';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { confirmInPage, launchBrowser, openBrowserPage, screenshot, signInThroughPage } from './helpers/browser';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';

/**
 * The active-session pages of contract 14 in a real headless Chromium: /Account/Sessions, where a
 * user sees and ends their own sessions, and the selected user's sessions on the Users page.
 */
describe('active sessions in a browser', () => {
  let t: TestApp;
  let chromium: Chromium;
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];

  /** A fresh browser (own cookies) whose script errors and CSP refusals are recorded. */
  const browserSession = async () => {
    const s = await openBrowserPage(chromium);
    contexts.push(s.context);
    s.page.on('pageerror', (error) => problems.push(`${s.page.url()}: ${error.message}`));
    s.page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`${s.page.url()}: ${message.text()}`);
    });
    return s;
  };

  /** The session id of a browser: the `sid` of its JWT cookie. */
  const sidOf = async (context: BrowserContext) => {
    const cookie = (await context.cookies()).find((c) => c.name === 'authentication-jwt');
    return (jwt.decode(cookie!.value) as { sid: string }).sid;
  };

  const rowsOf = (page: Page) => page.locator('#session-list tbody tr[data-session-id]');
  const waitForCount = (page: Page, count: number) => page.waitForSelector(`#sessions[data-count="${count}"]`);

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    // The seeded Administrator's first sign-in sets its password (it is created expired).
    await signInAdministrator(t);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await chromium?.close();
    await t?.close();
  });

  it('two sessions of one user: each sees both, the current one marked; one ends the other, which is refused after', async () => {
    const user = await insertUser(t, { name: 'dana', password: STRONG });
    const laptop = await browserSession();
    await signInThroughPage(laptop.page, t.url, 'dana', STRONG);
    t.clock.advance(1000);
    const phone = await browserSession();
    await signInThroughPage(phone.page, t.url, 'dana', STRONG, '/Account/Sessions');
    expect(new URL(phone.page.url()).pathname).toBe('/Account/Sessions');
    const laptopSid = await sidOf(laptop.context);
    const phoneSid = await sidOf(phone.context);
    expect(laptopSid).not.toBe(phoneSid);

    // Linked from the navigation of every page.
    await expect(laptop.page.locator('#nav a[href="/Account/Sessions"]').count()).resolves.toBe(1);

    await waitForCount(phone.page, 2);
    await expect(rowsOf(phone.page).evaluateAll((rows) => rows.map((r) => r.getAttribute('data-session-id')))).resolves.toEqual([phoneSid, laptopSid]);
    const current = phone.page.locator('#session-list tr.current-session');
    await expect(current.getAttribute('data-session-id')).resolves.toBe(phoneSid);
    await expect(current.innerText()).resolves.toContain('This session');
    await expect(phone.page.locator(`tr[data-session-id="${laptopSid}"]`).innerText()).resolves.toContain('Username and Password');
    await screenshot(phone.page, 'account-sessions');

    // The laptop's page marks the laptop's session instead.
    await laptop.page.goto(`${t.url}/Account/Sessions`);
    await waitForCount(laptop.page, 2);
    await expect(laptop.page.locator('#session-list tr.current-session').getAttribute('data-session-id')).resolves.toBe(laptopSid);

    // The phone ends the laptop's session.
    await phone.page.click(`tr[data-session-id="${laptopSid}"] button.end-session`);
    await confirmInPage(phone.page, /End the session started/);
    await phone.page.locator('#session-messages .notice').waitFor();
    await expect(phone.page.locator('#session-messages').innerText()).resolves.toBe('The session has ended.');
    await waitForCount(phone.page, 1);
    await expect(rowsOf(phone.page).getAttribute('data-session-id')).resolves.toBe(phoneSid);

    // The laptop is refused from now on: its next page asks it to sign in.
    await laptop.page.goto(`${t.url}/`);
    await laptop.page.waitForURL(/\/Account\/Login\?returnUrl=%2F&session=ended$/);
    const [ended] = await t.db.query<{ EndReasonId: number; EndedByUser: string; EndedDate: Date | null }>(
      `SELECT "EndReasonId", "EndedByUser", "EndedDate" FROM "UserSession" WHERE "Id" = $1`,
      [laptopSid],
    );
    expect(ended).toMatchObject({ EndReasonId: LogoutReasonId.SessionEnded, EndedByUser: 'dana', EndedDate: t.clock.now() });
    const logouts = await t.db.query(`SELECT "ReasonId", "OutcomeId", "CutByUser" FROM "UserLogout" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(logouts).toEqual([{ ReasonId: LogoutReasonId.SessionEnded, OutcomeId: LogoutOutcomeId.Revoked, CutByUser: 'dana' }]);

    // The phone goes on, then ends its own session: this browser is signed out.
    await phone.page.reload();
    await waitForCount(phone.page, 1);
    await phone.page.click(`tr[data-session-id="${phoneSid}"] button.end-session`);
    await confirmInPage(phone.page, /this session \(you will be signed out here\)/);
    await phone.page.getByTestId('session-ended').waitFor();
    expect((await phone.context.cookies()).filter((c) => c.name.startsWith('authentication-'))).toEqual([]);
    await phone.page.goto(`${t.url}/Account/Sessions`);
    await phone.page.waitForURL(/\/Account\/Login\?returnUrl=%2FAccount%2FSessions$/);
  });

  it('the Users page lists the selected user\'s sessions; End session signs that browser out', async () => {
    const user = await insertUser(t, { name: 'erin', password: STRONG });
    const erin = await browserSession();
    await signInThroughPage(erin.page, t.url, 'erin', STRONG);
    const erinSid = await sidOf(erin.context);
    t.clock.advance(1000);

    const admin = await browserSession();
    await signInThroughPage(admin.page, t.url, 'Administrator', ADMIN_PASSWORD, '/Administration/Security/Users?user=erin');
    await expect(admin.page.locator('#user-name').innerText()).resolves.toBe('erin');
    await waitForCount(admin.page, 1);
    await expect(rowsOf(admin.page).getAttribute('data-session-id')).resolves.toBe(erinSid);
    // In an administrator's list no session is "this session".
    await expect(admin.page.locator('#session-list tr.current-session').count()).resolves.toBe(0);
    await screenshot(admin.page, 'users-sessions');

    await admin.page.click(`tr[data-session-id="${erinSid}"] button.end-session`);
    await confirmInPage(admin.page);
    await admin.page.locator('#session-messages .notice').waitFor();
    await waitForCount(admin.page, 0);
    await expect(admin.page.locator('#session-list').innerText()).resolves.toContain('No active sessions.');

    await erin.page.goto(`${t.url}/`);
    await erin.page.waitForURL(/\/Account\/Login\?returnUrl=%2F&session=ended$/);
    const logouts = await t.db.query(`SELECT "ReasonId", "CutByUser" FROM "UserLogout" WHERE "UserRegistryId" = $1`, [user.id]);
    expect(logouts).toEqual([{ ReasonId: LogoutReasonId.SessionEnded, CutByUser: 'Administrator' }]);
    // The administrator's own session is untouched.
    await admin.page.reload();
    await expect(admin.page.locator('#current-user').innerText()).resolves.toBe('Administrator');

    // The User Logout page lists the end under its reason, which its Reason filter offers.
    await admin.page.goto(`${t.url}/Administration/Security/UserLogout?reasonId=${LogoutReasonId.SessionEnded}&search=erin`);
    await admin.page.locator('#grid-summary[data-state="ready"]').waitFor();
    const row = admin.page.locator('#grid tbody tr', { hasText: 'erin' });
    await expect(row.locator('td[data-label="Reason"]').innerText()).resolves.toBe('One session was ended');
    await expect(row.locator('td[data-label="Cut by"]').innerText()).resolves.toBe('Administrator');
    await expect(admin.page.locator('#grid-toolbar select[name="reasonId"] option:checked').innerText()).resolves.toBe('One session was ended');
  });

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
