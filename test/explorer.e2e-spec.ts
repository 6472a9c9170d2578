import type { Browser as Chromium } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, screenshot, signInThroughPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, signInAdministrator } from './helpers/users';

/**
 * The API explorer at /swagger/index.html (the address the README and the Home page give) in a real
 * Chromium, signed in through the pages: Swagger UI renders under the strict Content-Security-Policy
 * and "Try it out" calls the API with the session cookie.
 */
describe('API explorer in a browser', () => {
  let t: TestApp;
  let chromium: Chromium;

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    await signInAdministrator(t); // sets the Administrator's own password (the seeded one is expired)
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('is served with the strict policy and no inline script, at every address it answers', async () => {
    const { browser } = await signInAdministrator(t);
    for (const path of ['/swagger/index.html', '/swagger', '/swagger/']) {
      const res = await browser.get(path, { accept: 'text/html' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
      expect(res.headers.get('content-security-policy')).toMatch(/style-src 'self'(;|$)/);
      expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(res.text.match(/<script[^>]*>/g)!.every((tag) => / src="\/(swagger|assets)\/[\w.-]+\.js"/.test(tag))).toBe(true);
      expect(res.text).not.toMatch(/<style| on\w+=|style=/);
      for (const asset of res.text.match(/(?:src|href)="(\/[^"]+)"/g)!.map((a) => a.replace(/^(src|href)="|"$/g, ''))) {
        expect({ asset, status: (await browser.get(asset)).status }).toEqual({ asset, status: 200 });
      }
    }
    // Only Swagger UI's own files are served from its folder, and only to a signed-in caller.
    expect((await browser.get('/swagger/index.js')).status).toBe(404);
    expect((await browser.get('/swagger/swagger-initializer.js')).status).toBe(404);
    expect((await browser.get('/swagger/..%2Fpackage.json')).status).toBe(404);
    expect((await new Browser(t.url).get('/swagger/swagger-ui-bundle.js')).status).toBe(401);
  });

  it('renders the operations and runs "Try it out" on a GET with the session cookie', async () => {
    const { page, context } = await openBrowserPage(chromium);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });

    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD, '/swagger/index.html');
    await page.waitForURL(`${t.url}/swagger/index.html`);
    await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 30_000 });
    expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
    await expect(page.locator('.info .title').textContent()).resolves.toMatch(/Transaction monitoring/);

    const operation = page.locator('.opblock.opblock-get', { has: page.locator('[data-path="/api/Authentication/Session"]') });
    await operation.locator('.opblock-summary').first().click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ state: 'visible', timeout: 30_000 });
    expect((await status.textContent())?.trim()).toBe('200');
    const body = await operation.locator('.live-responses-table .response-col_description pre').first().textContent();
    expect(JSON.parse(body!)).toMatchObject({ userName: 'Administrator', authenticationType: 'Cookie', landlord: true });
    await screenshot(page, 'api-explorer');

    expect(problems).toEqual([]);
    await context.close();
  });
});
