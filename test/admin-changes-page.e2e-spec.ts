import type { Browser as Chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, signInAdministrator } from './helpers/users';

const DESKTOP = 1366;
const PHONE = 390;

/**
 * Administration > Security > AdminChanges in a real Chromium (contract 18): a change made through
 * the API shows as a row whose changes read before and after side by side, at 1366 and 390 px; the
 * Tenants page's history link opens the grid filtered to that tenant alone.
 */
describe('the AdminChanges page', () => {
  let t: TestApp;
  let chromium: Chromium;
  let api: Browser;
  let page: Page;
  const problems: string[] = [];

  /** The Changes table of each shown row, as [field, before, after] rows. */
  const changeTables = (p: Page) =>
    p.locator('#grid tbody td.changes-cell table.changes').evaluateAll((tables) =>
      tables.map((table) => [...table.querySelectorAll(':scope > tbody > tr')].map((tr) => [...tr.children].map((c) => (c.textContent ?? '').trim()))),
    );
  const loaded = async (p: Page) => {
    await p.locator('body[data-ready="true"]').waitFor();
    await p.locator('#grid-summary[data-state="ready"]').waitFor();
  };

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ browser: api } = await signInAdministrator(t));
    const s = await openBrowserPage(chromium);
    watchPage(s.page, problems);
    page = s.page;
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('shows a rename with its before and after side by side, and the history link filters to that tenant', async () => {
    const created = await api.post('/api/TenantRegistry', { name: 'Harbour Bank' });
    expect(created.status).toBe(201);
    const id = created.json.id as number;
    expect((await api.put(`/api/TenantRegistry/${id}`, { name: 'Harbour Bank Ltd' })).status).toBe(200);
    const other = await api.post('/api/TenantRegistry', { name: 'Inland Bank' });
    expect(other.status).toBe(201);

    // The whole grid (the default window, the last hour): both tenants' changes, the rename readable.
    await page.setViewportSize({ width: DESKTOP, height: 900 });
    await page.goto(`${t.url}/Administration/Security/AdminChanges`);
    await loaded(page);
    await expect(page.locator('nav a[href="/Administration/Security/AdminChanges"]').count()).resolves.toBeGreaterThan(0);
    const rename = page.locator('#grid tbody tr', { hasText: 'TenantChanged' }).filter({ hasText: 'Harbour Bank Ltd' });
    await expect(rename.locator('table.changes tr[data-field="name"]').evaluate((tr) => [...tr.children].map((c) => c.textContent))).resolves.toEqual([
      'name',
      'Harbour Bank',
      'Harbour Bank Ltd',
    ]);
    await expect(rename.locator('table.changes thead').innerText()).resolves.toMatch(/Field\s+Before\s+After/);
    const all = await page.locator('#grid tbody td[data-label="Target"]').allInnerTexts();
    expect(all.some((x) => x.startsWith('Inland Bank'))).toBe(true);
    // The JSON column has no sort button (the database cannot order it).
    await expect(page.locator('#grid thead th', { hasText: 'Changes' }).locator('button').count()).resolves.toBe(0);
    await screenshot(page, `admin-changes-${DESKTOP}`);

    // The Tenants page links to that tenant's history: its rows only, over all time.
    await page.goto(`${t.url}/Administration/Security/Tenants?tenant=${id}`);
    await page.locator('body[data-ready="true"]').waitFor();
    await page.click('#tenant-links a:has-text("History of Harbour Bank Ltd")');
    await page.waitForURL(new RegExp(`/Administration/Security/AdminChanges\\?targetTable=TenantRegistry&targetId=${id}&from=`));
    await loaded(page);
    await expect(page.locator('select[name="targetTable"]').inputValue()).resolves.toBe('TenantRegistry');
    await expect(page.locator('input[name="targetId"]').inputValue()).resolves.toBe(String(id));
    await expect(page.locator('#grid-summary').innerText()).resolves.toMatch(/^2 matching rows/);
    await expect(page.locator('#grid tbody td[data-label="Action"]').allInnerTexts()).resolves.toEqual(['TenantChanged', 'TenantCreated']);
    const tables = await changeTables(page);
    expect(tables[0]).toEqual([['name', 'Harbour Bank', 'Harbour Bank Ltd']]);
    // A creation: nothing before, the new values after.
    expect(tables[1]).toContainEqual(['name', '—', 'Harbour Bank']);
    const targets = await page.locator('#grid tbody td[data-label="Target"]').allInnerTexts();
    expect(targets.every((x) => !x.includes('Inland Bank'))).toBe(true);

    // A phone: rows are cards, the before/after table still side by side and within the screen.
    await page.setViewportSize({ width: PHONE, height: 844 });
    await page.reload();
    await loaded(page);
    const box = await page.locator('#grid tbody tr').first().locator('table.changes').boundingBox();
    expect(box).not.toBeNull();
    expect(box!.x).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE);
    const cells = await page.locator('#grid tbody tr').first().locator('table.changes tr[data-field="name"] > *').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().top));
    expect(new Set(cells.map(Math.round)).size).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE);
    await screenshot(page, `admin-changes-${PHONE}`);
    expect(problems).toEqual([]);
  });
});
