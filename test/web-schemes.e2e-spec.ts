import type { Browser as Chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, screenshot, submitSignIn } from './helpers/browser';
import { Browser } from './helpers/http';
import { insertUser } from './helpers/users';
import { FailureTypeId } from '../src/sign-in-trail/audit.types';

const STRONG = 'Corr3ct-Horse-Battery';

/**
 * The sign-in page under the other settings (service.md 5.2, 5.3): the passcode step with the bundled
 * MFA mock, the straight redirect to OAuth, and Negotiate tried in the background first.
 */
describe('sign-in page per scheme', () => {
  let chromium: Chromium;
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string>) => {
    const t = await startTestApp({ env });
    apps.push(t);
    return t;
  };

  beforeAll(async () => {
    chromium = await launchBrowser();
  });
  afterAll(async () => {
    await chromium?.close();
    for (const t of apps) await t.close();
  });

  it('with MFA, a right password reveals only the passcode field; a wrong passcode is the generic failure; 12345678 signs in', async () => {
    const t = await start({ EnableMultifactorAuthentication: 'True' });
    expect((await new Browser(t.url).get('/api/Authentication/Schemes')).json).toEqual({ password: true, oauth: false, negotiate: false, mfa: true });
    await insertUser(t, { name: 'mfa.user', password: STRONG });
    const { page, context } = await openBrowserPage(chromium);
    await page.goto(`${t.url}/Account/Login?returnUrl=%2FAccount%2FChangePassword`);

    const passcodeStep = async (p: Page) => {
      await p.locator('input[name="mfa"]').waitFor({ state: 'visible' });
      expect(await p.locator('input[name="userName"]').isVisible()).toBe(false);
      expect(await p.locator('input[name="password"]').isVisible()).toBe(false);
    };
    await submitSignIn(page, 'mfa.user', STRONG);
    await passcodeStep(page);
    expect((await context.cookies()).map((c) => c.name)).not.toContain('authentication-jwt');
    await screenshot(page, 'login-mfa');

    await page.fill('input[name="mfa"]', '00000000');
    await page.click('#login-form button[type="submit"]');
    await expect(page.getByTestId('login-error').innerText()).resolves.toMatch(/Sign-in failed/);

    await submitSignIn(page, 'mfa.user', STRONG);
    await passcodeStep(page);
    await page.fill('input[name="mfa"]', '12345678');
    await page.click('#login-form button[type="submit"]');
    await page.waitForURL(`${t.url}/Account/ChangePassword`);
    const rows = await t.db.query<{ Failed: boolean; FailureTypeId: number | null }>(
      `SELECT "Failed", "FailureTypeId" FROM "UserLogin" WHERE "CreatedUser" = 'mfa.user' ORDER BY "Id"`,
    );
    expect(rows).toEqual([
      { Failed: true, FailureTypeId: FailureTypeId.SecondFactorRejected },
      { Failed: false, FailureTypeId: null },
    ]);
    await context.close();
  });

  it('with OAuth, /Account/Login answers 302 to the OAuth login with the local returnUrl only', async () => {
    const t = await start({ OAuthAuthentication: 'True', OAuthAuthority: 'http://127.0.0.1:9/', OAuthClientId: 'pages' });
    const http = new Browser(t.url, {});
    expect((await http.get('/api/Authentication/Schemes')).json).toEqual({ password: false, oauth: true, negotiate: false, mfa: false });
    const local = await http.get('/Account/Login?returnUrl=%2FAdministration%2FSecurity%2FUsers');
    expect(local.status).toBe(302);
    expect(local.headers.get('location')).toBe('/api/Authentication/OAuth/Login?returnUrl=%2FAdministration%2FSecurity%2FUsers');
    for (const hostile of ['//evil.example/', '/\\evil.example', 'https://evil.example/', '/\r\nSet-Cookie:x=1']) {
      const res = await http.get(`/Account/Login?returnUrl=${encodeURIComponent(hostile)}`);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe('/api/Authentication/OAuth/Login');
    }
    // A page without a session goes through the sign-in page, which goes on to the provider.
    expect((await http.get('/Administration/Security/Users')).headers.get('location')).toBe('/Account/Login?returnUrl=%2FAdministration%2FSecurity%2FUsers');
    // After a failed return the page is shown (no redirect loop), with one generic message.
    const failed = await http.get('/Account/Login?error=access_denied');
    expect(failed.status).toBe(200);
    const { page, context } = await openBrowserPage(chromium);
    await page.goto(`${t.url}/Account/Login?error=access_denied&returnUrl=%2FAdministration`);
    await expect(page.getByTestId('login-error').innerText()).resolves.toMatch(/identity provider did not succeed/);
    expect(await page.locator('#login-form').isVisible()).toBe(false);
    expect(await page.locator('#oauth-login').getAttribute('href')).toBe('/api/Authentication/OAuth/Login?returnUrl=%2FAdministration');
    await screenshot(page, 'login-oauth-error');
    await context.close();
  });

  it('with Negotiate, the page tries ByNegotiate in the background and reveals the form on 401', async () => {
    const t = await start({ NegotiateAuthentication: 'True' });
    expect((await new Browser(t.url).get('/api/Authentication/Schemes')).json).toEqual({ password: false, oauth: false, negotiate: true, mfa: false });
    const { page, context } = await openBrowserPage(chromium);
    const [negotiate] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/Authentication/ByNegotiate')),
      page.goto(`${t.url}/Account/Login`),
    ]);
    expect(negotiate.status()).toBe(401);
    await page.locator('#login-form').waitFor({ state: 'visible' });
    expect(await page.locator('input[name="userName"]').isVisible()).toBe(true);
    await context.close();
  });
});
