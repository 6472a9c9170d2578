import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, signInThroughPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, signInAdministrator } from './helpers/users';
import { seedTelemetry } from './helpers/web-data';

const DESKTOP = { width: 1366, height: 860 };
const PHONE = { width: 390, height: 844 };
const WIDTHS = [DESKTOP, PHONE];
const CHROME_ON_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';
/** A busy machine walks these pages slowly: a generous deadline, not a timing assertion. */
const SLOW = 300_000;

/** Screenshots for a reviewer to look at, outside the repository (never committed). */
const SHOTS = process.env.WEB_SCREENSHOTS ?? join(tmpdir(), 'tm-web-pages');

async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** An instant as the page should show it in `timeZone`: "2026-11-25 14:19:32 EST". */
function wallTime(iso: string, timeZone: string): string {
  const d = new Date(iso);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' })
      .formatToParts(d)
      .map((p) => [p.type, p.value]),
  );
  const zone = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(d).find((p) => p.type === 'timeZoneName')!.value;
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${zone}`;
}

/** The API's UTC instant as the page shows it in UTC: "2026-11-25 19:19:32 UTC". */
const utcText = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;

/**
 * Issue 22 in a real Chromium at 1366 and 390 px: every date says its zone, with a remembered switch
 * between local time and UTC (tried in New York and in Kolkata); sessions and API keys name their
 * device and say how fresh "last seen" and "last used" are; the three tables that had no page have
 * one in the menu; the API explorer is in the menu with a way back, closed locks while signed in and
 * curl lines naming the credential; search placeholders are whole and the menu stays in view.
 */
describe('pages an operator can act on', () => {
  let t: TestApp;
  let chromium: Chromium;
  let admin: Browser;
  const problems: string[] = [];
  const contexts: BrowserContext[] = [];

  const session = async (options: { timezoneId?: string; userAgent?: string } = {}) => {
    const s = await openBrowserPage(chromium, { ...options, viewport: DESKTOP });
    contexts.push(s.context);
    s.page.on('pageerror', (error) => problems.push(`${s.page.url()}: ${error.message}`));
    s.page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`${s.page.url()}: ${message.text()}`);
    });
    return s;
  };

  /** Opens a page of the application and waits until its script has drawn it. */
  async function open(page: Page, path: string, viewport = DESKTOP): Promise<void> {
    await page.setViewportSize(viewport);
    await page.goto(`${t.url}${path}`);
    await page.locator('body[data-ready="true"]').waitFor();
  }

  /** Presses a button of the menu: in the side menu on a wide screen, through the Menu panel on a phone. */
  async function pressInMenu(page: Page, selector: string): Promise<void> {
    if (!(await page.locator(selector).isVisible())) await page.locator('#menu-button').click();
    await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
    await page.locator('body[data-ready="true"]').waitFor();
  }

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ browser: admin } = await signInAdministrator(t));
    const now = Math.floor(t.clock.nowMs() / 1000) * 1000;
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000 - 17_000);
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       VALUES ($1, '7c1d2f5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f', 'Card fraud scoring', 3, 12500000, $1, 'node-1.bank.example')`,
      [at(5)],
    );
    await t.db.query(
      `INSERT INTO "OpenTelemetryMetric" ("Name", "Tags", "Count", "Sum", "Min", "Max", "CreatedDate", "Instance")
       VALUES ('service.engine.archiver.stage.duration', '{"stage":"RdbmsArchiveWrite"}', 42, 1234.5, 3.25, 98.5, $1, 'node-1.bank.example')`,
      [at(3)],
    );
    for (const [table, event, endpoint] of [
      ['RedisConnectionEvent', 'reconnecting', 'redis-1.bank.example:6379'],
      ['RedisSentinelEvent', '+switch-master', 'sentinel-2.bank.example:26379'],
    ]) {
      await t.db.query(
        `INSERT INTO "${table}" ("OccurredDate", "EventName", "Endpoint", "Message", "CreatedDate", "Instance") VALUES ($1, $2, $3, $4, $1, 'node-1.bank.example')`,
        [at(4), event, endpoint, `${event} after the connection to ${endpoint} was reset by the peer`],
      );
    }
  });
  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await chromium?.close();
    await t?.close();
  });

  it.each(['America/New_York', 'Asia/Kolkata'])(
    'in %s every date says its zone, the UTC switch shows the API value and is remembered, and the CSV stays UTC',
    async (timeZone) => {
      const { page } = await session({ timezoneId: timeZone });
      await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
      const api = await page.request.get(`${t.url}/api/ArchiverWarning`);
      expect(api.status()).toBe(200);
      const iso = (await api.json()).rows[0].createdDate as string;
      expect(iso).toMatch(/Z$/);
      const local = wallTime(iso, timeZone);
      expect(local).not.toBe(utcText(iso));
      const firstDate = () => page.locator('#grid tbody tr').first().locator('td[data-label="Date"]').innerText();
      const slug = timeZone.split('/')[1].toLowerCase();

      for (const viewport of WIDTHS) {
        // Local time by default, named: "EST" in New York, "GMT+5:30" in Kolkata.
        await open(page, '/Administration/Performance/ArchiverWarning', viewport);
        expect(await firstDate()).toBe(local);
        expect(await page.locator('#grid-toolbar label').first().innerText()).toBe(`From (${local.split(' ')[2]})`);
        await expect(page.locator('.hint').first().innerText()).resolves.toMatch(/the CSV export and the API give them in UTC/);
        await shot(page, `zone-${slug}-${viewport.width}-local`);

        await pressInMenu(page, '#zone-utc');
        expect(await firstDate()).toBe(utcText(iso));
        expect(await page.locator('#grid-toolbar label').first().innerText()).toBe('From (UTC)');
        // Remembered: a new visit of another page still shows UTC.
        await open(page, '/Account/Sessions', viewport);
        expect(await page.locator('#session-list tbody tr td[data-label="Started"]').first().innerText()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n/);
        expect(await page.locator('#zone-utc').getAttribute('aria-pressed')).toBe('true');
        await open(page, '/Administration/Performance/ArchiverWarning', viewport);
        expect(await firstDate()).toBe(utcText(iso));
        // The CSV export is UTC whatever the page shows.
        const csv = await (await page.request.get(`${t.url}${await page.locator('#export-csv').getAttribute('href')}`)).text();
        expect(csv).toContain(iso.slice(0, 19));
        expect(csv).not.toContain(local.slice(0, 19));
        await shot(page, `zone-${slug}-${viewport.width}-utc`);

        await pressInMenu(page, '#zone-local');
        expect(await firstDate()).toBe(local);
      }
    },
    SLOW,
  );

  it('sessions, sign-ins and API keys name the device, the full user agent one tap away on a phone; last seen and last used say how fresh they are', async () => {
    const { page } = await session({ userAgent: CHROME_ON_LINUX });
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    const curl = new Browser(t.url);
    expect((await curl.post('/api/Authentication/ByUserNamePassword', { userName: 'Administrator', password: ADMIN_PASSWORD }, { 'user-agent': 'curl/8.5.0' })).status).toBe(200);
    const [me] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    const key = await admin.post(`/api/UserRegistry/${me.Id}/ApiKey`, { name: 'Nightly export' });
    expect(key.status).toBe(201);
    expect((await new Browser(t.url, {}).get('/api/Authentication/Session', { 'x-api-key': key.json.apiKey })).status).toBe(200);

    for (const viewport of WIDTHS) {
      await open(page, '/Account/Sessions', viewport);
      await page.locator('#sessions[data-loaded="true"]').waitFor();
      const devices = await page.getByTestId('session-device').locator('.device').allInnerTexts();
      expect(devices).toEqual(expect.arrayContaining(['Chrome 156 on Linux', 'curl 8.5']));
      expect(devices.every((d) => !/Mozilla|KHTML/.test(d))).toBe(true);
      // The full text is one tap away (a disclosure, not a hover tooltip).
      const curlDevice = page.getByTestId('session-device').filter({ hasText: 'curl 8.5' });
      expect(await curlDevice.locator('.agent-text').isVisible()).toBe(false);
      await curlDevice.locator('summary').tap().catch(() => curlDevice.locator('summary').click());
      await expect(curlDevice.locator('.agent-text').innerText()).resolves.toBe('curl/8.5.0');
      const chrome = page.getByTestId('session-device').filter({ has: page.getByText('Chrome 156 on Linux', { exact: true }) });
      await chrome.locator('summary').click();
      await expect(chrome.locator('.agent-text').innerText()).resolves.toBe(CHROME_ON_LINUX);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(viewport.width);
      expect(await page.locator('.last-seen').first().innerText()).toMatch(/^Last seen (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC · (under a minute|\d+ min) ago|not yet)/);
      await expect(page.locator('#last-seen-note').innerText()).resolves.toMatch(/at most once a minute/);
      await shot(page, `sessions-${viewport.width}`);

      await open(page, '/Administration/Security/Users?user=Administrator', viewport);
      const keyRow = page.locator('#api-key-list tbody tr', { hasText: 'Nightly export' });
      await keyRow.waitFor();
      expect(await keyRow.locator('td[data-label="Last used"]').innerText()).toMatch(/^(Never|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\n(under a minute|\d+ min) ago)$/);
      await expect(page.locator('#last-used-note').innerText()).resolves.toMatch(/at most once a minute/);
      await page.locator('#api-keys').screenshot({ path: join(SHOTS, `api-keys-${viewport.width}.png`) });

      await open(page, '/Administration/Security/UserLogin', viewport);
      const agents = await page.locator('#grid td[data-label="Device"] .device').allInnerTexts();
      expect(agents).toEqual(expect.arrayContaining(['Chrome 156 on Linux', 'curl 8.5']));
      await shot(page, `userlogin-${viewport.width}`);
    }
  }, SLOW);

  it('the three tables without a page have one, in the menu, at both widths', async () => {
    const { page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    const pages: [string, string, string][] = [
      ['/Administration/Performance/OpenTelemetryMetric', 'OpenTelemetry Metric', 'service.engine.archiver.stage.duration'],
      ['/Administration/Logs/RedisConnectionEvent', 'Redis Connection Event', 'reconnecting'],
      ['/Administration/Logs/RedisSentinelEvent', 'Redis Sentinel Event', '+switch-master'],
    ];
    for (const viewport of WIDTHS) {
      for (const [path, title, first] of pages) {
        await open(page, path, viewport);
        expect(await page.locator('h1').innerText()).toBe(title);
        await page.locator('#grid-summary[data-state="ready"]').waitFor();
        expect(await page.locator('#grid tbody tr').first().innerText()).toContain(first);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        const link = page.locator(`#nav a[href="${path}"]`);
        expect(await link.innerText()).toBe(title);
        expect(await link.getAttribute('aria-current')).toBe('page');
        await shot(page, `${path.split('/').pop()!.toLowerCase()}-${viewport.width}`);
      }
    }
    await open(page, '/Administration/Performance/OpenTelemetryMetric');
    expect(await page.locator('#grid td[data-label="Tags"]').first().innerText()).toBe('stage=RdbmsArchiveWrite');
    expect(await page.locator('#grid td[data-label="Count"]').first().innerText()).toBe('42');
    // Without a session the page sends the browser to sign in first, like every other page.
    const anonymous = await session();
    await anonymous.page.goto(`${t.url}/Administration/Logs/RedisSentinelEvent`);
    expect(anonymous.page.url()).toContain('/Account/Login?returnUrl=');
  }, SLOW);

  it('the API explorer: in the menu, a way back, closed locks while signed in, and curl lines that name the credential', async () => {
    const { page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    await open(page, '/');
    const link = page.locator('#nav a', { hasText: 'API explorer' });
    expect(await link.getAttribute('href')).toBe('/swagger/index.html');
    for (const viewport of WIDTHS) {
      await page.setViewportSize(viewport);
      await page.goto(`${t.url}/swagger/index.html`);
      await page.locator('body[data-signed-in="true"]').waitFor({ timeout: 60_000 });
      await page.locator('.opblock').first().waitFor({ state: 'visible', timeout: 60_000 });
      await expect(page.locator('#explorer-session').innerText()).resolves.toBe('Signed in as Administrator (Landlord)');
      await page.waitForFunction(() => document.querySelectorAll('button[aria-label="authorization button unlocked"]').length === 0, undefined, { timeout: 30_000 });
      expect(await page.locator('button[aria-label="authorization button locked"]').count()).toBeGreaterThan(20);
      const operation = page.locator('.opblock.opblock-get', { has: page.locator('[data-path="/api/Authentication/Session"]') });
      await operation.locator('.opblock-summary').first().click();
      await operation.locator('.try-out__btn').click();
      await operation.locator('.execute').click();
      const status = operation.locator('.live-responses-table .response .response-col_status').first();
      await status.waitFor({ state: 'visible', timeout: 60_000 });
      expect((await status.textContent())?.trim()).toBe('200');
      await expect(operation.locator('.curl-command').innerText()).resolves.toMatch(/-H 'Cookie: authentication-jwt=PASTE-YOUR-SESSION-COOKIE'/);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(SHOTS, `explorer-${viewport.width}-top.png`) });
      await operation.locator('.curl-command').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `explorer-${viewport.width}-curl.png`) });
      // And back to the application.
      const back = page.locator('a.explorer-back');
      expect(await back.isVisible()).toBe(true);
      await Promise.all([page.waitForURL(`${t.url}/`), back.click()]);
      await page.locator('body[data-ready="true"]').waitFor();
    }
  }, SLOW);

  it('search placeholders are whole at 1366 px, and the menu stays in view on a long page at both widths', async () => {
    const { page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    const searchPages = ['Security/UserLogin', 'Security/UserLogout', 'Performance/CaseCreationWarning', 'Logs/ModelInvokeWarning', 'Performance/OpenTelemetryMetric', 'Logs/RedisConnectionEvent'];
    for (const path of searchPages) {
      await open(page, `/Administration/${path}`);
      const cut = await page.locator('input[type="search"]').evaluate((input: HTMLInputElement) => {
        const style = getComputedStyle(input);
        const context = document.createElement('canvas').getContext('2d')!;
        context.font = `${style.fontSize} ${style.fontFamily}`;
        const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return context.measureText(input.placeholder).width - room;
      });
      expect([path, cut <= 0]).toEqual([path, true]);
    }

    // A long page: the statistics opened, 25 rows of sign-ins.
    for (let i = 0; i < 30; i++) await new Browser(t.url).post('/api/Authentication/ByUserNamePassword', { userName: `nobody.${i}`, password: 'Whatever-123' });
    await open(page, '/Administration/Security/UserLogin');
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(400);
    const nav = (await page.locator('#nav').boundingBox())!;
    expect(nav.y).toBeGreaterThanOrEqual(0);
    expect(nav.y).toBeLessThanOrEqual(60);
    expect(await page.locator('#nav a', { hasText: 'Sign out' }).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'sticky-menu-1366.png') });

    await open(page, '/Administration/Security/UserLogin', PHONE);
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
    const bar = (await page.locator('.topbar').boundingBox())!;
    expect(bar.y).toBe(0);
    await page.locator('#menu-button').click();
    await page.locator('#nav').waitFor({ state: 'visible' });
    expect(await page.locator('#nav a', { hasText: 'Sign out' }).isVisible()).toBe(true);
    await page.screenshot({ path: join(SHOTS, 'sticky-menu-390.png') });
  }, SLOW);

  it('each telemetry page leads with a chart over time from the Series route, the first rows in view at 1366×860 and the histograms behind a toggle', async () => {
    await seedTelemetry(t);
    const { page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    // page, default grouping, whether durations (µs) are drawn
    const pages: [string, string | null, boolean][] = [
      ['Performance/ArchiverStagePerformanceCounter', 'stageId', true],
      ['Performance/ArchiverWarning', 'stageId', true],
      ['Performance/CaseCreationStagePerformanceCounter', 'stageId', true],
      ['Performance/CaseCreationWarning', 'stageId', true],
      ['Performance/CaptureQueueHealth', 'queueId', false],
      ['Performance/OpenTelemetryMetric', 'instance', false],
      ['Logs/ModelInvokeWarning', 'entityAnalysisModelGuid', true],
      ['Logs/RedisConnectionEvent', 'instance', false],
      ['Logs/RedisSentinelEvent', 'instance', false],
    ];
    for (const viewport of WIDTHS) {
      for (const [path, by, durations] of pages) {
        await open(page, `/Administration/${path}`, viewport);
        await page.locator('#grid-summary[data-state="ready"]').waitFor();
        const chart = page.getByTestId('series-chart');
        expect([path, await chart.getAttribute('data-state')]).toEqual([path, 'drawn']);
        // The lines are the Series route's answer for the same window and grouping.
        const table = path.split('/')[1];
        const answer = await (await page.request.get(`${t.url}/api/${table}/Series?${by ? `by=${by}` : ''}`)).json();
        const legend = await page.getByTestId('series-chart-legend').locator('li[data-series]').evaluateAll((items) => items.map((li) => [li.getAttribute('data-series'), li.textContent]));
        expect(legend.map(([key]) => key)).toEqual(answer.series.map((x: { key: string }) => x.key));
        for (const [key, name] of legend) {
          const named = answer.series.find((x: { key: string }) => x.key === key).name;
          if (named) expect(name).toBe(named);
        }
        // Mean and max, each in a panel of its own, except where only a count is drawn.
        const panels = await chart.locator('.chart-panel').evaluateAll((items) => items.map((p) => p.getAttribute('data-line')));
        expect(panels).toEqual(table.startsWith('Redis') ? ['count'] : table.endsWith('PerformanceCounter') ? ['meanMicroseconds', 'max'] : ['mean', 'max']);
        const dots = await chart.locator('.chart-panel').first().locator('circle.chart-dot').count();
        expect(dots).toBe(answer.series.reduce((n: number, x: { points: unknown[] }) => n + x.points.length, 0));
        const ticks = await chart.locator('text.chart-tick').allTextContents();
        if (durations) expect(ticks.filter((tick) => /^\d[\d.,]* (µs|ms|s)$|^\d+ min \d+ s$|^0 µs$/.test(tick)).length).toBeGreaterThanOrEqual(2);
        expect(ticks.some((tick) => /^\d\d:\d\d$/.test(tick))).toBe(true);
        expect(await page.locator('.chart-caption').innerText()).toMatch(/times in UTC/);
        // The histograms wait behind their toggle; the first grid rows are on the first screen.
        if (await page.locator('#statistics-toggle').count()) expect(await page.locator('#statistics-toggle').getAttribute('open')).toBeNull();
        if (viewport === DESKTOP) {
          const row = (await page.locator('#grid tbody tr').first().boundingBox())!;
          expect([path, row.y + row.height <= DESKTOP.height]).toEqual([path, true]);
        }
        // The figures behind the lines are one tap away, as a table that fits the screen.
        await page.locator('.chart-values > summary').click();
        const values = page.locator('.chart-values tbody tr');
        expect(await values.count()).toBe(Math.min(240, answer.series.reduce((n: number, x: { points: unknown[] }) => n + x.points.length, 0)));
        // textContent, not innerText: a redraw of the chart can close the disclosure again, and Chromium gives
        // the text of closed <details> content as "".
        expect(await page.locator('.chart-values td[data-label="Rows"]').first().textContent()).toMatch(/^\d+$/);
        expect(await page.locator('.chart-values .table-holder').evaluate((box) => box.scrollWidth - box.clientWidth)).toBeLessThanOrEqual(0);
        await page.locator('.chart-values > summary').click();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        // The first screen, as a person sees it on arriving (at phone width, scrolled to the chart).
        if (viewport === PHONE) await chart.scrollIntoViewIfNeeded();
        await page.screenshot({ path: join(SHOTS, `chart-${table.toLowerCase()}-${viewport.width}.png`) });
      }
    }

    // Archiver Stage Performance Counter names models, draws one line per model, and filters by model.
    await open(page, '/Administration/Performance/ArchiverStagePerformanceCounter');
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    expect(await page.locator('#grid td[data-label="Model"]').first().innerText()).toMatch(/^(Card fraud scoring \(retail\)|Anti money laundering)\n[0-9a-f]{8}…$/);
    const models = await page.locator('select[name="entityAnalysisModelGuid"] option').allTextContents();
    expect(models).toEqual(['All models', 'Anti money laundering', 'Card fraud scoring (retail)']);
    await page.selectOption('#chart-by', 'entityAnalysisModelGuid');
    await page.waitForURL(/by=entityAnalysisModelGuid/);
    await expect(page.getByTestId('series-chart-legend').locator('li[data-series]').allTextContents()).resolves.toEqual(['Card fraud scoring (retail)', 'Anti money laundering']);
    await page.selectOption('select[name="entityAnalysisModelGuid"]', { label: 'Anti money laundering' });
    await page.click('#grid-toolbar button[type="submit"]');
    await page.waitForURL(/entityAnalysisModelGuid=0b7e8a4c/);
    await page.locator('#grid-summary[data-state="ready"]').waitFor();
    const shown = await page.locator('#grid td[data-label="Model"]').allInnerTexts();
    expect(shown.length).toBe(8);
    expect(shown.every((text) => text.startsWith('Anti money laundering'))).toBe(true);
    await expect(page.getByTestId('series-chart-legend').locator('li[data-series]').allTextContents()).resolves.toEqual(['Anti money laundering']);
    await page.screenshot({ path: join(SHOTS, 'chart-model-filter-1366.png') });
    // The histograms are one click away, and the choice is remembered.
    await page.locator('#statistics-toggle > summary').click();
    await page.getByTestId('histogram-totalMicroseconds').waitFor();
    await open(page, '/Administration/Performance/ArchiverWarning');
    expect(await page.locator('#statistics-toggle').getAttribute('open')).not.toBeNull();
  }, SLOW);

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
