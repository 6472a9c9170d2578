import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { ApiKeyUsageWriter } from '../src/api-keys/api-key-usage.writer';
import { startTestApp, TestApp } from './helpers/app';
import { createKey, sessionWithApiKey } from './helpers/api-keys';
import { launchBrowser, openBrowserPage, screenshot, SCREENSHOTS, signInThroughPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';

const DESKTOP = { width: 1366, height: 860 };
const PHONE = { width: 390, height: 844 };
const CHROME_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

/**
 * Issue 22, API keys: the Users page names the client that last used each key ("curl 8.5") from the
 * user agent its last use sent, with the full text one tap away at phone width, as the Sessions page
 * does for a session.
 */
describe('API keys name their device in a browser', () => {
  let t: TestApp;
  let chromium: Chromium;
  let admin: Browser;
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ browser: admin } = await signInAdministrator(t));
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await chromium?.close();
    await t?.close();
  });

  it('shows "curl 8.5" for a key last used by curl and the full text after a tap, at 1366 and 390 px', async () => {
    const user = await insertUser(t, { name: 'integrations', password: 'Corr3ct-Horse-Battery' });
    const curl = await createKey(t, admin, user.id, { name: 'Nightly export', description: 'curl from the batch host' });
    const chrome = await createKey(t, admin, user.id, { name: 'Dashboard' });
    const unused = await createKey(t, admin, user.id, { name: 'Spare' });
    const revoked = await createKey(t, admin, user.id, { name: 'Old reporting' });
    expect((await sessionWithApiKey(t, curl.apiKey, { 'user-agent': 'curl/8.5.0' })).status).toBe(200);
    expect((await sessionWithApiKey(t, chrome.apiKey, { 'user-agent': CHROME_ON_WINDOWS })).status).toBe(200);
    expect((await sessionWithApiKey(t, revoked.apiKey, { 'user-agent': 'python-requests/2.31.0' })).status).toBe(200);
    // The minute's usage write (the job calls this), then the revocation: history keeps the device.
    await t.app.get(ApiKeyUsageWriter).flush();
    expect((await admin.delete(`/api/UserRegistry/${user.id}/ApiKey/${revoked.id}`)).status).toBe(204);

    const { context, page } = await openBrowserPage(chromium, { viewport: DESKTOP });
    contexts.push(context);
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`${page.url()}: ${message.text()}`);
    });
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);

    const row = (p: Page, keyId: number) => p.locator(`#api-key-list tr[data-key-id="${keyId}"]`);
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await page.goto(`${t.url}/Administration/Security/Users?user=integrations`);
      await row(page, curl.id).waitFor();

      const curlDevice = row(page, curl.id).getByTestId('key-device');
      await expect(curlDevice.locator('summary').innerText()).resolves.toBe('curl 8.5');
      await expect(row(page, chrome.id).getByTestId('key-device').locator('summary').innerText()).resolves.toBe('Chrome 156 on Windows');
      // A key never used names no device.
      await expect(row(page, unused.id).locator('td[data-label="Last used"]').innerText()).resolves.toBe('Never');
      await expect(page.locator('#last-used-note').innerText()).resolves.toMatch(/tap it for the full text/);

      // The full text is one tap away: a disclosure, not a hover tooltip a phone does not have.
      expect(await curlDevice.locator('.agent-text').isVisible()).toBe(false);
      if (viewport === PHONE) await curlDevice.locator('summary').tap().catch(() => curlDevice.locator('summary').click());
      else await curlDevice.locator('summary').click();
      await expect(curlDevice.locator('.agent-text').innerText()).resolves.toBe('curl/8.5.0');
      const chromeDevice = row(page, chrome.id).getByTestId('key-device');
      await chromeDevice.locator('summary').click();
      await expect(chromeDevice.locator('.agent-text').innerText()).resolves.toBe(CHROME_ON_WINDOWS);

      // The revoked key's history names the client of its last use too.
      await page.locator('#revoked-keys > summary').click();
      await expect(page.locator(`#revoked-key-list tr[data-key-id="${revoked.id}"]`).getByTestId('key-device').locator('summary').innerText()).resolves.toBe(
        'Python requests 2.31',
      );

      // Nothing runs off the side, opened disclosures included: neither the page nor the keys' table.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
      const holder = await page.locator('#api-keys .table-holder').evaluate((e) => ({ scroll: e.scrollWidth, client: e.clientWidth }));
      expect(holder.scroll).toBeLessThanOrEqual(holder.client);
      await page.locator('#api-keys').scrollIntoViewIfNeeded();
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.locator('#api-keys').screenshot({ path: join(SCREENSHOTS, `api-key-device-${viewport.width}.png`) });
      // From the top: a full-page shot of a scrolled page draws the sticky bar over its middle.
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, `api-key-device-page-${viewport.width}`);
    }
  }, 120_000);

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
