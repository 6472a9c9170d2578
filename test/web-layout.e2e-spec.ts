import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { PAGES } from '../src/web/pages';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { seedTelemetry } from './helpers/web-data';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const DESKTOP = 1366;
const PHONE = 390;
/** Walking every page twice is long on a busy machine: a generous deadline, not a timing assertion. */
const WALK_TIMEOUT_MS = 600_000;
const LONG_AGENT =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86';

/** What a page's layout measured in the browser. */
interface Measure {
  documentWidth: number;
  headerOverflow: number;
  gridOverflow: number | null;
  /** Tables that scroll sideways inside their box (described by their first header cells). */
  scrollingTables: string[];
  cutFigures: string[];
  figures: { text: string; title: string | null }[];
}

/**
 * Every page at desktop (1366 px) and phone (390 px) width, as a landlord administrator and as an
 * ordinary tenant administrator: nothing is wider than the screen, the header keeps to its bar, the
 * navigation is reachable through the Menu button on a phone, statistics values are never cut and
 * read in human units, wide grids fit at 1366 px. A screenshot of each is saved for a reviewer.
 */
describe('every page at desktop and phone width', () => {
  let t: TestApp;
  let chromium: Chromium;
  const problems: string[] = [];

  const session = async () => {
    const s = await openBrowserPage(chromium);
    watchPage(s.page, problems);
    return s;
  };

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    const { browser: admin } = await signInAdministrator(t);
    await insertUser(t, { name: 'north.admin', password: STRONG, tenantName: 'Bank North', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    await insertUser(t, { name: 'north.teller', password: STRONG, tenantName: 'Bank North' });
    await insertUser(t, { name: 'north.new.starter', password: STRONG, tenantName: 'Bank North', expired: true });
    await seedTelemetry(t);
    // Sign-in history: a success, a wrong password, a forced change asked for, an unknown name.
    const agent = { 'user-agent': LONG_AGENT };
    const anonymous = new Browser(t.url);
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'north.teller', password: STRONG }, agent);
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'north.teller', password: 'Wrong-password-1' }, agent);
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'north.new.starter', password: STRONG }, agent);
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'nobody.here', password: 'Whatever-123' }, agent);
    await anonymous.post('/api/Authentication/Logout', undefined, agent);
    const [teller] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'north.teller'`);
    expect((await admin.post(`/api/UserRegistry/RevokeTokens/${teller.Id}`)).status).toBe(204);
    const key = await admin.post(`/api/UserRegistry/${teller.Id}/ApiKey`, { name: 'Nightly export', description: 'Pulls the day’s alerts into the reporting warehouse' });
    expect(key.status).toBe(201);
    const old = await admin.post(`/api/UserRegistry/${teller.Id}/ApiKey`, { name: 'Old export' });
    expect((await admin.request('DELETE', `/api/UserRegistry/${teller.Id}/ApiKey/${old.json.id}`)).status).toBe(204);
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  /** Opens `path` at `width`, waits for the page to be drawn, and measures its layout. */
  async function open(page: Page, path: string, width: number): Promise<{ status: number; measure: Measure }> {
    await page.setViewportSize({ width, height: 900 });
    const response = await page.goto(`${t.url}${path}`);
    await page.locator('body[data-ready="true"]').waitFor();
    // Cards that load on their own (a user's API keys and sessions) have arrived too.
    await page.waitForLoadState('networkidle');
    const measure = await page.evaluate((): Measure => {
      const topbar = document.querySelector('.topbar') as HTMLElement;
      const holder = document.getElementById('grid-holder');
      const dds = [...document.querySelectorAll('.figures dd')] as HTMLElement[];
      return {
        documentWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
        headerOverflow: topbar.scrollWidth - topbar.clientWidth,
        gridOverflow: holder ? holder.scrollWidth - holder.clientWidth : null,
        scrollingTables: ([...document.querySelectorAll('.table-holder')] as HTMLElement[])
          .filter((box) => box.scrollWidth > box.clientWidth)
          .map((box) => `${box.querySelector('table')?.id || 'table'} (${[...box.querySelectorAll('th')].slice(0, 3).map((th) => th.textContent).join(', ')}) by ${box.scrollWidth - box.clientWidth}px`),
        cutFigures: dds.filter((dd) => dd.scrollWidth > dd.clientWidth || dd.scrollHeight > dd.clientHeight + 1).map((dd) => dd.textContent ?? ''),
        figures: dds.map((dd) => ({ text: dd.textContent ?? '', title: dd.getAttribute('title') })),
      };
    });
    return { status: response!.status(), measure };
  }

  /** On a phone: no side navigation, a Menu button that opens and closes it from the keyboard. */
  async function checkPhoneMenu(page: Page): Promise<string> {
    expect(await page.locator('#nav').isVisible()).toBe(false);
    const button = page.locator('#menu-button');
    expect(await button.isVisible()).toBe(true);
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    expect(await button.getAttribute('aria-controls')).toBe('nav');
    await button.focus();
    await page.keyboard.press('Enter');
    await page.locator('#nav').waitFor({ state: 'visible' });
    expect(await button.getAttribute('aria-expanded')).toBe('true');
    // The focus moved into the menu, and the menu fits the screen.
    expect(await page.evaluate(() => document.activeElement?.closest('#nav') !== null)).toBe(true);
    const box = (await page.locator('#nav').boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(PHONE);
    const links = await page.locator('#nav a').allInnerTexts();
    await page.keyboard.press('Escape');
    await page.locator('#nav').waitFor({ state: 'hidden' });
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('menu-button');
    // A tap on the page beside the open panel closes it too.
    await button.click();
    await page.locator('#nav').waitFor({ state: 'visible' });
    await page.mouse.click(PHONE - 10, 880);
    await page.locator('#nav').waitFor({ state: 'hidden' });
    expect(await button.getAttribute('aria-expanded')).toBe('false');
    return links.join('|');
  }

  /**
   * Opens every page at both widths and collects what is wrong (all of it, not only the first
   * problem, so one run shows every page that needs work), then saves its screenshot.
   */
  async function walk(who: string, context: BrowserContext, page: Page, allowed: (path: string) => boolean) {
    const wrong: string[] = [];
    let seen = 0;
    const [teller] = await t.db.query<{ Id: number; RoleRegistryId: number }>(`SELECT "Id", "RoleRegistryId" FROM "UserRegistry" WHERE "Name" = 'north.teller'`);
    const [north] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "TenantRegistry" WHERE "Name" = 'Bank North'`);
    // Every page, and the pages with something opened in them: a user (keys, sessions, revoked keys), a role, a tenant.
    const visits = [
      ...PAGES.filter((p) => p.path !== '/Account/Login').map((p) => ({ path: p.path, page: p.path, slug: p.path === '/' ? 'home' : p.path.split('/').slice(-1)[0].toLowerCase() })),
      { path: '/Administration/Security/Users?user=north.teller', page: '/Administration/Security/Users', slug: 'users-selected' },
      { path: `/Administration/Security/Roles?role=${teller.RoleRegistryId}`, page: '/Administration/Security/Roles', slug: 'roles-selected' },
      { path: `/Administration/Security/Tenants?tenant=${north.Id}`, page: '/Administration/Security/Tenants', slug: 'tenants-selected' },
    ];
    for (const { path, page: pagePath, slug } of visits) {
      for (const width of [DESKTOP, PHONE]) {
        const { status, measure } = await open(page, path, width);
        const where = `${who} ${path} at ${width}px`;
        if (status !== (allowed(pagePath) ? 200 : 403)) wrong.push(`${where}: status ${status}`);
        if (measure.documentWidth > width) wrong.push(`${where}: the page is ${measure.documentWidth}px wide`);
        if (measure.headerOverflow > 0) wrong.push(`${where}: the header spills by ${measure.headerOverflow}px`);
        if (measure.cutFigures.length > 0) wrong.push(`${where}: statistics cut: ${measure.cutFigures.join(', ')}`);
        if (width === DESKTOP && measure.gridOverflow) wrong.push(`${where}: the grid scrolls sideways by ${measure.gridOverflow}px`);
        if (measure.scrollingTables.length > 0) wrong.push(`${where}: tables scroll sideways: ${measure.scrollingTables.join('; ')}`);
        if (width === PHONE) {
          const links = await checkPhoneMenu(page);
          if (!links.includes('Home') || !links.includes('Sign out')) wrong.push(`${where}: the menu offers ${links}`);
        }
        await screenshot(page, `${who}-${width}-${slug}`);
        seen++;
      }
    }
    expect(wrong).toEqual([]);
    expect(seen).toBe(visits.length * 2);
    await context.close();
  }

  it('a landlord administrator: every page fits at 1366 and 390 px, the phone menu works, statistics read in human units', async () => {
    const { context, page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    await walk('landlord', context, page, () => true);
  }, WALK_TIMEOUT_MS);

  it('statistics: every figure readable at both widths, in ms, s or min with the exact microseconds on hover; an all-zero set says so', async () => {
    const { context, page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    for (const width of [DESKTOP, PHONE]) {
      let { measure } = await open(page, '/Administration/Performance/ArchiverStagePerformanceCounter', width);
      // The figures and histograms sit behind a toggle under the chart; opened once, it stays open.
      if ((await page.locator('#statistics-toggle').getAttribute('open')) === null) {
        await page.locator('#statistics-toggle > summary').click();
        ({ measure } = await open(page, '/Administration/Performance/ArchiverStagePerformanceCounter', width));
      }
      expect(await page.locator('#statistics-toggle').getAttribute('open')).not.toBeNull();
      expect(measure.cutFigures).toEqual([]);
      // Four statistics columns, five figures each; three of them durations.
      expect(measure.figures).toHaveLength(20);
      const total = page.getByTestId('statistics-totalMicroseconds');
      const figures = await total.locator('dd').evaluateAll((dds) => dds.map((dd) => [dd.textContent, dd.getAttribute('title')]));
      // Totals of 133,971,466 µs and up read as minutes and seconds, the raw value on hover.
      expect(figures[0]).toEqual(['2 min 14 s', '133,971,466 µs']);
      for (const [text, title] of figures) {
        expect(text).toMatch(/^\d[\d.,]* (µs|ms|s|min \d+ s|h \d+ min)$/);
        expect(title).toMatch(/^[\d,.]+ µs$/);
      }
      // Counts stay counts, whole and readable (they wrap rather than being cut).
      const counts = await page.getByTestId('statistics-invokeCount').locator('dd').allTextContents();
      expect(counts[0]).toBe('45,796,123');
      // The histogram names every bucket's range on screen, not only on hover.
      const ranges = await page.locator('[data-testid="histogram-totalMicroseconds"] th.range').allTextContents();
      expect(ranges.slice(1)).toHaveLength(10);
      expect(ranges[1]).toMatch(/^2 min 14 s – 2 min \d+ s$/);
      await screenshot(page, `statistics-${width}`);

      await open(page, '/Administration/Performance/CaptureQueueHealth', width);
      await expect(page.getByTestId('histogram-queueDepth').innerText()).resolves.toMatch(/^No variation: all (6\d|[7-9]\d) values are 0\.$/);
      await expect(page.getByTestId('histogram-droppedCount').getAttribute('data-state')).resolves.toBe('no-variation');
      expect(await page.locator('[data-testid="histogram-queueDepth"] .bar').count()).toBe(0);

      // An empty window: "no data", not a chart of zeros.
      const from = new Date(t.clock.nowMs() - 30 * 86_400_000).toISOString();
      const to = new Date(t.clock.nowMs() - 29 * 86_400_000).toISOString();
      await open(page, `/Administration/Performance/ArchiverWarning?from=${from}&to=${to}`, width);
      await expect(page.getByTestId('histogram-durationMicroseconds').getAttribute('data-state')).resolves.toBe('no-data');
      await expect(page.getByTestId('statistics-durationMicroseconds').innerText()).resolves.toMatch(/No data: no rows in this window/);
      expect(await page.locator('.figures').count()).toBe(0);
    }
    await context.close();
  }, WALK_TIMEOUT_MS);

  it('an ordinary tenant administrator: the pages it may open fit at both widths, the others refuse politely, the menu offers only its pages', async () => {
    const { context, page } = await session();
    await signInThroughPage(page, t.url, 'north.admin', STRONG);
    await page.setViewportSize({ width: PHONE, height: 900 });
    await page.goto(`${t.url}/`);
    await page.locator('body[data-ready="true"]').waitFor();
    const links = await checkPhoneMenu(page);
    expect(links).toBe('Home|Roles|Users|User Login|User Logout|Admin Changes|Sessions|Passkeys|Change password|API explorer|Sign out');
    const tenantPages = new Set(['/', '/Account/ChangePassword', '/Account/Logout', '/Account/Passkeys', '/Account/Sessions', '/Administration/Security/Roles', '/Administration/Security/Users', '/Administration/Security/UserLogin', '/Administration/Security/UserLogout', '/Administration/Security/AdminChanges']);
    await walk('tenant', context, page, (path) => tenantPages.has(path));
  }, WALK_TIMEOUT_MS);

  it('the sign-in and sign-out pages fit a phone too', async () => {
    const { context, page } = await session();
    for (const width of [DESKTOP, PHONE]) {
      const { measure } = await open(page, '/Account/Login', width);
      expect(measure.documentWidth).toBe(width);
      expect(measure.headerOverflow).toBe(0);
      await screenshot(page, `anonymous-${width}-login`);
      const logout = await open(page, '/Account/Logout', width);
      expect(logout.measure.documentWidth).toBe(width);
      await screenshot(page, `anonymous-${width}-logout`);
    }
    await context.close();
  });

  it('no page raised a script error or a Content-Security-Policy refusal', () => {
    expect(problems).toEqual([]);
  });
});
