import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';

/** Debian's chromium; .ci/run installs it on a fresh machine. */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const SCREENSHOTS = join(__dirname, '..', '..', 'test-output', 'screenshots');

/**
 * One headless Chromium per test file. Playwright gives each launch its own fresh temporary profile
 * (user-data-dir) and each context its own cookie jar, so a test can hold several independent
 * browser sessions at once.
 */
export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/**
 * A fresh browser context (its own cookies) and page with a desktop-sized window, in UTC unless `timezoneId`
 * names another zone (Chromium then runs the page's clock there, as a browser in that city would).
 */
export async function openBrowserPage(
  browser: Browser,
  options: { acceptDownloads?: boolean; timezoneId?: string; userAgent?: string; viewport?: { width: number; height: number } } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1360, height: 860 },
    acceptDownloads: options.acceptDownloads ?? true,
    locale: 'en-GB',
    timezoneId: options.timezoneId ?? 'UTC',
    userAgent: options.userAgent,
  });
  const page = await context.newPage();
  // The pages ask with their own in-page dialog (confirmInPage). A native confirm() is dismissed, so
  // an action still hiding behind one would not happen and its test would fail.
  page.on('dialog', (dialog) => void dialog.dismiss());
  return { context, page };
}

/**
 * Records into `problems` what a page must never do: throw, or be refused by the Content Security
 * Policy (a refusal shows only as a console line). Tests assert `problems` is empty at the end.
 */
export function watchPage(page: Page, problems: string[]): Page {
  page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`${page.url()}: ${message.text()}`);
  });
  return page;
}

/** Answers the page's own confirmation dialog (web/assets/dialog.js) the way a person does: the confirm button. */
export async function confirmInPage(page: Page, expected?: RegExp): Promise<void> {
  const dialog = page.getByTestId('confirm-dialog');
  await dialog.waitFor();
  if (expected) expect(await dialog.innerText()).toMatch(expected);
  await dialog.locator('button.dialog-confirm').click();
  await dialog.waitFor({ state: 'detached' });
}

/** Saves a full-page screenshot under test-output/screenshots for a reviewer to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Fills and submits the sign-in form of /Account/Login (already open). */
export async function submitSignIn(page: Page, userName: string, password: string): Promise<void> {
  await page.locator('#login-form').waitFor({ state: 'visible' });
  await page.fill('input[name="userName"]', userName);
  await page.fill('input[name="password"]', password);
  await page.click('#login-form button[type="submit"]');
}

/** Opens the sign-in page, signs in and waits until the browser has left the sign-in page. */
export async function signInThroughPage(page: Page, baseUrl: string, userName: string, password: string, returnUrl = '/'): Promise<void> {
  await page.goto(`${baseUrl}/Account/Login?returnUrl=${encodeURIComponent(returnUrl)}`);
  await submitSignIn(page, userName, password);
  await page.waitForURL((url) => url.pathname !== '/Account/Login');
}
