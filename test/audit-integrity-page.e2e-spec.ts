import type { Browser as Chromium, Page } from 'playwright-core';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { launchBrowser, openBrowserPage, screenshot, signInThroughPage, watchPage } from './helpers/browser';
import { Browser } from './helpers/http';
import { ADMIN_PASSWORD, insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const STRONG = 'Corr3ct-Horse-Battery';
const DESKTOP = 1366;
const PHONE = 390;

/**
 * Administration > Security > Audit integrity in a real Chromium (contract 15): what a landlord
 * administrator reads there matches the API (latest checkpoint, rows waiting, the last retention run
 * or "none", the verifier key and the command that verifies), at 1366 and 390 px; a tenant
 * administrator neither sees it in the menu nor may open it.
 */
describe('the Audit integrity page', () => {
  let t: TestApp;
  let chromium: Chromium;
  let api: Browser;
  const problems: string[] = [];

  const session = async () => {
    const s = await openBrowserPage(chromium);
    watchPage(s.page, problems);
    return s;
  };
  const open = async (page: Page, width: number) => {
    await page.setViewportSize({ width, height: 900 });
    const response = await page.goto(`${t.url}/Administration/Security/AuditIntegrity`);
    await page.locator('body[data-ready="true"]').waitFor();
    return response!.status();
  };
  const text = (page: Page, testid: string) => page.getByTestId(testid).innerText();

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp(), launchBrowser()]);
    ({ browser: api } = await signInAdministrator(t));
    await insertUser(t, { name: 'north.admin', password: STRONG, tenantName: 'Bank North', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
  });
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('shows the latest checkpoint, what waits, the last retention run and how to verify, at both widths', async () => {
    const { page } = await session();
    await signInThroughPage(page, t.url, 'Administrator', ADMIN_PASSWORD);
    await t.app.get(AuditSealer).sealPending();
    const status = (await api.get('/api/Audit/Status')).json;

    for (const width of [DESKTOP, PHONE]) {
      expect(await open(page, width)).toBe(200);
      // Rows may have been sealed between the API read and the page's own: the page agrees with the log.
      const size = Number((await text(page, 'checkpoint-size')).replace(/\D/g, ''));
      expect(size).toBeGreaterThanOrEqual(status.latest.treeSize);
      const latest = (await api.get(`/api/Audit/Checkpoint?treeSize=${size}`)).json;
      expect(await text(page, 'checkpoint-root')).toBe(latest.rootHash);
      expect(await page.getByTestId('checkpoint-note').textContent()).toBe(latest.note);
      expect(await text(page, 'pending-rows')).toMatch(/^\d+$/);
      expect(await text(page, 'seal-interval')).toBe('1 s');
      expect(await text(page, 'retention-none')).toMatch(/^None/);
      expect(await text(page, 'retention-held-none')).toMatch(/^None/);
      expect(await text(page, 'verifier-key')).toBe(status.verifierKey);
      const command = await text(page, 'verify-command');
      expect(command).toContain(`npm run audit:verify -- --url ${t.url} `);
      expect(command).toContain(`--verifier-key '${status.verifierKey}'`);
      const width_ = await page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));
      expect(width_).toBeLessThanOrEqual(width);
      await screenshot(page, `audit-integrity-${width}`);
    }

    // The menu offers it to a landlord administrator (on a phone, inside the Menu panel).
    await page.setViewportSize({ width: DESKTOP, height: 900 });
    expect(await page.locator('#nav a', { hasText: 'Audit integrity' }).count()).toBe(1);

    // A retention run appears once there is one; rows waiting are counted with their age.
    await t.db.query(
      `INSERT INTO "AuditRetentionRun" ("RunDate", "TableName", "PartitionName", "Cutoff", "RowCount") VALUES (now(), 'UserLogout', 'UserLogout_2025_10', '2025-11-01Z', 1234)`,
    );
    const lock = await t.db.pool.connect();
    try {
      // Held back as if the sealer were down: the page says a row waits.
      await lock.query('BEGIN');
      await lock.query('SELECT pg_advisory_xact_lock(7206310519)');
      await t.db.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId") VALUES ('waiting', 1)`);
      await open(page, DESKTOP);
      expect(Number(await text(page, 'pending-rows'))).toBeGreaterThanOrEqual(2);
      expect(await text(page, 'pending-age')).toMatch(/^(less than a second|\d+ s)$/);
      const retention = await page.getByTestId('audit-retention').innerText();
      expect(retention).toContain('UserLogout_2025_10');
      expect(retention).toContain('1,234');
      await screenshot(page, 'audit-integrity-waiting');
    } finally {
      await lock.query('ROLLBACK');
      lock.release();
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('is not offered to a tenant administrator, and refused (403) if opened', async () => {
    const { page } = await session();
    await signInThroughPage(page, t.url, 'north.admin', STRONG);
    await page.locator('body[data-ready="true"]').waitFor();
    expect(await page.locator('#nav a', { hasText: 'User Login' }).count()).toBe(1);
    expect(await page.locator('#nav a', { hasText: 'Audit integrity' }).count()).toBe(0);
    const response = await page.goto(`${t.url}/Administration/Security/AuditIntegrity`);
    expect(response!.status()).toBe(403);
    expect(problems).toEqual([]);
  }, 60_000);
});

/**
 * Contract 19 over contract 16: an audit partition past retention that an active security sink has
 * not acknowledged is kept, and the Audit integrity page names it with the sinks that hold it, at
 * 1366 and 390 px, as GET /api/Audit/RetentionHeld answers from any node.
 */
describe('the Audit integrity page: partitions kept for sinks', () => {
  let t: TestApp;
  let chromium: Chromium;
  const problems: string[] = [];
  const DAY = 86_400_000;

  beforeAll(async () => {
    [t, chromium] = await Promise.all([startTestApp({ env: { AuditRetention: 'd/365' } }), launchBrowser()]);
  }, 120_000);
  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  it('names each partition retention keeps, its last leaf and the sinks that owe it, at both widths', async () => {
    const { browser: api } = await signInAdministrator(t);
    // Nobody listens there: the sink fails and its cursor stays at 0.
    expect((await api.post('/api/SecuritySink', { name: 'siem-owed', type: 'webhook', url: 'http://127.0.0.1:9/hook', format: 'ocsf', secret: 'held-secret-0123456789', active: true, startLeafIndex: 0 })).status).toBe(201);
    await t.db.query(`INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, 'planted-old', 1, false)`, [new Date(Date.now() - 400 * DAY)]);
    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditPending"`);
      return n === 0;
    });
    const report = await t.app.get(PartitionMaintenance).applyRetention();
    expect(report.heldForSinks).toHaveLength(1);
    const { partition, lastLeafIndex } = report.heldForSinks[0];
    const held = await api.get('/api/Audit/RetentionHeld');
    expect(held.status).toBe(200);
    expect(held.json).toEqual([{ partition, lastLeafIndex, sinks: [{ name: 'siem-owed', nextLeafIndex: 0 }] }]);

    const s = await openBrowserPage(chromium);
    watchPage(s.page, problems);
    await signInThroughPage(s.page, t.url, 'Administrator', ADMIN_PASSWORD);
    for (const width of [DESKTOP, PHONE]) {
      await s.page.setViewportSize({ width, height: 900 });
      expect((await s.page.goto(`${t.url}/Administration/Security/AuditIntegrity`))!.status()).toBe(200);
      await s.page.locator('body[data-ready="true"]').waitFor();
      const listed = await s.page.getByTestId('retention-held-partitions').innerText();
      expect(listed).toContain(partition);
      expect(listed).toContain('siem-owed');
      expect(listed).toContain(`next leaf 0`);
      expect(await s.page.getByTestId('retention-held-none').count()).toBe(0);
      const scrollWidth = await s.page.evaluate(() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth));
      expect(scrollWidth).toBeLessThanOrEqual(width);
      await screenshot(s.page, `audit-integrity-held-${width}`);
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
