import { AuditOutside } from '../src/audit-outside/audit-outside.service';
import { AuditOutsideRepository, OutsideDeadlineError, OUTSIDE_SLICE_IDS } from '../src/audit-outside/audit-outside.repository';
import { startTestApp, TestApp } from './helpers/app';
import { asSuperuser } from './helpers/audit-log';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { signInAdministrator } from './helpers/users';
import { sealAllPending } from './helpers/sealing';

/**
 * The check for rows outside the log by summaries and Id ranges (issue 29, contract 18): it compares
 * count and keyed hash sums per Id range and checks exactly only the ranges that differ. These show it
 * names every row the full anti-join would (and a second row under a sealed row's Id, which the full
 * anti-join by Id did not): one far below the others, one far above across empty Id ranges, one in
 * the middle of many sealed rows, one that shares a sealed row's Id with another date; that sealed
 * rows spread over several ranges give nothing; and that a check that cannot finish answers 503.
 */
describe('rows outside the log found by range summaries (issue 29)', () => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let landlord: Browser;
  const BASE = 5_000_000;

  const sealAll = () => sealAllPending(t.app);

  beforeAll(async () => {
    t = await startTestApp({ logger: new CapturedLogs() });
    ({ browser: landlord } = await signInAdministrator(t));
    // Sealed rows (triggers on) spread over more than one first-level range: Ids BASE … BASE + 1.5 ranges.
    const span = Number(OUTSIDE_SLICE_IDS + OUTSIDE_SLICE_IDS / 2n);
    await t.db.query(
      `INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed")
       SELECT ${BASE} + g * ${Math.floor(span / 400)}, '2026-11-21T08:00:00Z'::timestamptz + g * interval '1 second', 'sealed-' || g, 1, false
         FROM generate_series(0, 400) g`,
    );
    await sealAll();
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it('finds nothing while every row is a leaf or waiting', async () => {
    const before = await landlord.get('/api/Audit/Outside');
    expect(before.status).toBe(200);
    expect(before.json).toEqual({ total: 0, rows: [] });
    // Waiting (committed with the triggers on, not sealed yet) is not outside.
    await t.db.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed") VALUES ('waiting', 1, false)`);
    expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    await sealAll();
  });

  it('names a row far below, far above, in the middle, and one under a sealed row\'s Id with another date', async () => {
    const [middle] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" WHERE "CreatedUser" = 'sealed-200'`);
    const [twin] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" WHERE "CreatedUser" = 'sealed-300'`);
    const far = String(BASE * 1000);
    const between = String(BigInt(middle.Id) + 1n);
    await asSuperuser(t.db, [
      [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (1000, '2026-11-01T00:00:00.000001Z', 'forged-low', 1, false)`],
      [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, '2026-11-02T00:00:00Z', 'forged-high', 1, false)`, [far]],
      [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, '2026-11-03T00:00:00Z', 'forged-middle', 1, false)`, [between]],
      [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES ($1, '2026-11-04T00:00:00Z', 'forged-twin', 1, false)`, [twin.Id]],
      [`INSERT INTO "UserLogout" ("Id", "CreatedDate", "CreatedUser", "ReasonId", "OutcomeId") VALUES (7000, '2026-11-05T00:00:00Z', 'forged-logout', 1, 1)`],
    ]);

    const outside = await landlord.get('/api/Audit/Outside');
    expect(outside.status).toBe(200);
    expect(outside.json.total).toBe(5);
    expect(outside.json.rows.map((r: any) => [r.table, r.rowId, r.createdDate, r.reason])).toEqual([
      ['UserLogin', '1000', '2026-11-01T00:00:00.000001Z', 'not-in-log'],
      ['UserLogin', far, '2026-11-02T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', between, '2026-11-03T00:00:00.000000Z', 'not-in-log'],
      ['UserLogin', twin.Id, '2026-11-04T00:00:00.000000Z', 'not-in-log'],
      ['UserLogout', '7000', '2026-11-05T00:00:00.000000Z', 'not-in-log'],
    ]);
    // The twin's canonical form is its own row's, not the sealed row's under the same Id.
    expect(JSON.parse(outside.json.rows[3].canonical).slice(0, 4)).toEqual(['UserLogin', twin.Id, '2026-11-04T00:00:00.000000Z', 'forged-twin']);
    expect(await t.app.get(AuditOutside).check()).toBe(5);

    // A row whose range was checked exactly because of another is not named for that: the sealed rows beside them stay unnamed.
    expect(outside.json.rows.some((r: any) => r.rowId === middle.Id)).toBe(false);

    // Adopted, the rows with an Id of their own are leaves and no longer outside; the twin stays (its Id has a leaf).
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['1000', far, between] })).status).toBe(200);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogout', rowIds: ['7000'] })).status).toBe(200);
    await sealAll();
    const after = await landlord.get('/api/Audit/Outside');
    expect(after.status).toBe(200);
    expect(after.json.rows.map((r: any) => [r.table, r.rowId, r.createdDate])).toEqual([['UserLogin', twin.Id, '2026-11-04T00:00:00.000000Z']]);
    expect(after.json.total).toBe(1);
  });

  it('stops at its deadline instead of answering late', async () => {
    await expect(t.app.get(AuditOutsideRepository).find(-1)).rejects.toBeInstanceOf(OutsideDeadlineError);
  });

  it('answers 503 with Retry-After, not 500, when a table it reads does not answer in time', async () => {
    // An operator's ACCESS EXCLUSIVE lock (a DDL statement) on a sealed table: the check's reads wait for it until their deadline.
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`LOCK TABLE "AuditRetentionRun" IN ACCESS EXCLUSIVE MODE`);
      const res = await landlord.get('/api/Audit/Outside');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
    expect((await landlord.get('/api/Audit/Outside')).status).toBe(200);
  });
});
