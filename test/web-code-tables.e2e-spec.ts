import type { Browser as Chromium, Page } from 'playwright-core';
import { codeTables } from '../src/web/code-tables';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, signInThroughPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { seedTelemetry } from './helpers/web-data';

/** A busy machine walks these pages slowly: a generous deadline, not a timing assertion. */
const SLOW = 300_000;

/**
 * The grid pages that show codes, and the server tables their code cells come from. A page that
 * stopped marking (or showing) its codes would leave a table here unseen and fail.
 */
const CODE_PAGES: Record<string, string[]> = {
  '/Administration/Security/UserLogin': ['failureReasons', 'authenticationTypes'],
  '/Administration/Security/UserLogout': ['logoutReasons', 'logoutOutcomes'],
  '/Administration/Performance/ArchiverStagePerformanceCounter': ['archiverStages'],
  '/Administration/Performance/ArchiverWarning': ['archiverStages'],
  '/Administration/Performance/CaseCreationStagePerformanceCounter': ['caseCreationStages'],
  '/Administration/Performance/CaseCreationWarning': ['caseCreationStages'],
  '/Administration/Performance/CaptureQueueHealth': ['captureQueues'],
};

interface Shown {
  codes: string;
  kind: 'select' | 'cell';
  /** select: [value, text] of each choice but "All"; cell: its name (the note under it left out). */
  values: Array<[string, string]>;
}

/** Every element of the page that says it shows codes of a server table (data-codes), and what it shows. */
function shownCodes(page: Page): Promise<Shown[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('[data-codes]')].map((element) => {
      if (element instanceof HTMLSelectElement) {
        const values = [...element.options].filter((o) => o.value !== '').map((o): [string, string] => [o.value, o.text]);
        return { codes: element.dataset.codes!, kind: 'select' as const, values };
      }
      const copy = element.cloneNode(true) as HTMLElement;
      copy.querySelectorAll('.cell-note').forEach((note) => note.remove());
      return { codes: element.dataset.codes!, kind: 'cell' as const, values: [['', copy.textContent ?? ''] as [string, string]] };
    }),
  );
}

/**
 * Issue 23: the code tables live once, on the server. The pages import them from the module the
 * server generates (/assets/code-tables.js); this walks every page that shows codes in Chromium and
 * fails on a filter choice or grid cell naming a code the server does not know.
 */
describe('code tables served once', () => {
  let t: TestApp;
  let chromium: Chromium;
  let page: Page;
  const problems: string[] = [];
  const tables = codeTables();

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    const { browser: admin } = await signInAdministrator(t);
    // UserLogin rows of several reasons and schemes, and a UserLogout row.
    await insertUser(t, { name: 'kim', password: 'A-Strong-Passw0rd!' });
    await insertUser(t, { name: 'lee', password: 'A-Strong-Passw0rd!', expired: true });
    const anonymous = new Browser(t.url);
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'lee', password: 'A-Strong-Passw0rd!' });
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'ghost', password: 'Whatever-123' });
    await anonymous.post('/api/Authentication/ByUserNamePassword', { userName: 'kim', password: 'Wrong-Passw0rd!' });
    const kim = new Browser(t.url);
    expect((await kim.post('/api/Authentication/ByUserNamePassword', { userName: 'kim', password: 'A-Strong-Passw0rd!' })).status).toBe(200);
    await kim.post('/api/Authentication/Logout');
    await admin.get('/api/UserLogin');
    await seedTelemetry(t);
    ({ page } = await openBrowserPage(chromium));
    page.on('pageerror', (error) => problems.push(`${page.url()}: ${error.message}`));
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
  }, SLOW);
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('the served module is the server tables, as an asset any page may import', async () => {
    const res = await new Browser(t.url).get('/assets/code-tables.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
    // As a string: the test's own compiler would rewrite a dynamic import() written as code.
    const imported = await page.evaluate(`import('/assets/code-tables.js').then((module) => module.CODE_TABLES)`);
    expect(imported).toEqual(tables);
  });

  it.each(Object.entries(CODE_PAGES))(
    '%s shows only names the server serves, its filters in the server order',
    async (path, expected) => {
      await page.goto(`${t.url}${path}`);
      await page.locator('body[data-ready="true"]').waitFor();
      await page.locator('tbody td[data-codes]').first().waitFor();
      const shown = await shownCodes(page);
      expect([...new Set(shown.filter((s) => s.kind === 'cell').map((s) => s.codes))].sort()).toEqual([...expected].sort());
      for (const { codes, kind, values } of shown) {
        const table = tables[codes];
        expect({ codes, known: table !== undefined }).toEqual({ codes, known: true });
        if (kind === 'select') {
          expect(values).toEqual(table.map((c) => [String(c.id), c.name]));
        } else {
          const names = new Set(table.map((c) => c.name));
          for (const [, name] of values) if (name !== '') expect({ codes, name, known: names.has(name) }).toEqual({ codes, name, known: true });
        }
      }
      expect(problems).toEqual([]);
    },
    SLOW,
  );

  it('the UserLogin grid marks a change-required attempt and explains it with the server note', async () => {
    const expired = tables.failureReasons.find((c) => c.key === 'PasswordExpired')!;
    await page.goto(`${t.url}/Administration/Security/UserLogin?failureTypeId=${expired.id}`);
    await page.locator('body[data-ready="true"]').waitFor();
    const cell = page.locator('tbody td[data-codes="failureReasons"]').first();
    await cell.locator('.cell-note').waitFor();
    expect(await cell.innerText()).toContain(expired.name);
    expect(await cell.locator('.cell-note').innerText()).toBe(expired.note);
    expect(await page.locator('tbody .badge-warn').first().innerText()).toBe('Change required');
  }, SLOW);

  it('the Roles page names and explains each permission from the server', async () => {
    await page.goto(`${t.url}/Administration/Security/Roles`);
    await page.locator('body[data-ready="true"]').waitFor();
    await page.locator('#new-role').click();
    const hints = await page.locator('.permission-list .hint').allInnerTexts();
    expect(hints.map((hint) => hint.trim())).toEqual(tables.permissions.map((c) => c.note));
    const labels = await page.locator('.permission-list label').allInnerTexts();
    expect(labels.map((label) => label.trim())).toEqual(tables.permissions.map((c) => `${c.name} (${c.id})`));
    expect(problems).toEqual([]);
  }, SLOW);
});
