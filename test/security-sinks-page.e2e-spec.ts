import type { Browser as Chromium, Page } from 'playwright-core';
import { startTestApp, TestApp } from './helpers/app';
import { launchBrowser, openBrowserPage, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { HttpReceiver } from './helpers/sink-receivers';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const SECRET = 'page-signing-key-0123456789';

/**
 * Administration > Security > Sinks in a real Chromium (contract 19), at 1366 and 390 px: a sink
 * created through the page, its state at a glance, a test event, pause, replay; the secret set and
 * never shown; a tenant administrator neither sees it in the menu nor may open it.
 */
describe('the Sinks page', () => {
  let t: TestApp;
  let chromium: Chromium;
  let api: Browser;
  const problems: string[] = [];
  const receiver = new HttpReceiver();

  const open = async (page: Page, width: number, query = '') => {
    await page.setViewportSize({ width, height: 900 });
    const response = await page.goto(`${t.url}/Administration/Security/Sinks${query}`);
    await page.locator('body[data-ready="true"]').waitFor();
    return response!.status();
  };

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ browser: api } = await signInAdministrator(t));
    await insertUser(t, { name: 'north.admin', password: STRONG, tenantName: 'Bank North', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await chromium?.close();
    await t?.close();
  });

  it('creates a sink, shows its state, tests, pauses and replays it, never shows the secret, at both widths', async () => {
    const { page } = await openBrowserPage(chromium);
    watchPage(page, problems);
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    expect(await open(page, 1366)).toBe(200);
    expect(await page.locator('#nav a', { hasText: 'Sinks' }).count()).toBe(1);
    await page.click('#new-sink');
    await page.fill('#sink-name', 'siem');
    await page.fill('#sink-url', receiver.url);
    await page.fill('#sink-secret', SECRET);
    await page.fill('#sink-headers', 'Authorization: Splunk page-token');
    await page.click('#save-sink');
    await page.getByText('Sink siem created.').waitFor();
    const [sink] = (await api.get('/api/SecuritySink')).json;
    expect(sink).toMatchObject({ name: 'siem', type: 'webhook', secretSet: true, headers: { Authorization: '****' }, active: true });
    expect(await page.locator('#sink-secret').inputValue()).toBe('');
    expect(await page.locator('#sink-headers').inputValue()).toBe('Authorization: ****');
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.content()).not.toContain('page-token');

    await page.click('#test-sink');
    expect(await page.getByTestId('test-reply').innerText()).toBe('Delivered (HTTP 200): ok');
    expect(receiver.batches.at(-1)!.headers.authorization).toBe('Splunk page-token');

    // Sign-ins reach it; the page shows it up to date.
    await signInAdministrator(t);
    // The page is opened again until it shows the sink caught up: a row sealed between the API's answer and
    // the page's own read (the checks here are requests too) would show one leaf behind for a moment.
    await eventually(async () => {
      if (!((await api.get(`/api/SecuritySink/${sink.id}`)).json.behindLeaves === 0 && receiver.leafIndexes().length > 0)) return false;
      await open(page, 1366, `?sink=${sink.id}`);
      return (await page.getByTestId('sink-state').first().innerText()) === 'Delivering';
    });
    expect(await page.getByTestId('sink-state').first().innerText()).toBe('Delivering');
    expect(await page.getByTestId('sink-behind').innerText()).toBe('up to date');

    await page.click('#pause-sink');
    await page.getByText('Paused.').waitFor();
    expect((await api.get(`/api/SecuritySink/${sink.id}`)).json).toMatchObject({ active: false, headers: { Authorization: '****' }, secretSet: true });
    await page.fill('#replay-from', '0');
    await page.click('#replay-sink');
    await page.getByText('Leaves from 0 will be sent again, in order.').waitFor();
    expect((await api.get(`/api/SecuritySink/${sink.id}`)).json.nextLeafIndex).toBe(0);
    expect(await page.getByTestId('sink-state').first().innerText()).toBe('Paused');
    // A failure shows its reason.
    await api.put(`/api/SecuritySink/${sink.id}`, { name: 'siem', type: 'webhook', url: receiver.url, format: 'ocsf', active: true });
    receiver.mode = 'error500';
    await eventually(async () => (await api.get(`/api/SecuritySink/${sink.id}`)).json.failingSince !== null);

    for (const width of [1366, 390]) {
      expect(await open(page, width, `?sink=${sink.id}`)).toBe(200);
      expect(await page.getByTestId('sink-state').first().innerText()).toBe('Failing');
      expect(await page.getByTestId('sink-error').innerText()).toBe('HTTP 500: receiver failed');
      const scroll = await page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));
      expect(scroll).toBeLessThanOrEqual(width);
      await screenshot(page, `sinks-${width}`);
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('a tenant administrator neither sees it nor may open it', async () => {
    const { page } = await openBrowserPage(chromium);
    await signInThroughPage(page, t.url, 'north.admin', STRONG);
    await page.goto(`${t.url}/`);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#nav a', { hasText: 'Sinks' }).count()).toBe(0);
    const response = await page.goto(`${t.url}/Administration/Security/Sinks`);
    expect(response!.status()).toBe(403);
  });
});
