import { AuditOutside } from '../src/audit-outside/audit-outside.service';
import { startTestApp, TestApp } from './helpers/app';
import { createKey } from './helpers/api-keys';
import { asSuperuser } from './helpers/audit-log';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { signInAdministrator, signInTenantAdministrator } from './helpers/users';
import { ActionTypeId } from '../src/admin-changes/admin-change.types';
import { sealAllPending, verifyService } from './helpers/sealing';

/**
 * No row outside the log (contract 18), on PostgreSQL: rows slipped into the sealed tables as a
 * superuser would (triggers off, or the waiting entry deleted) are named by GET /api/Audit/Outside,
 * logged at ERROR by the check, make `npm run audit:verify` exit 1 naming the first, and once adopted
 * (with an AdminChange RowsAdopted of their own) are leaves and verify.
 */
describe('no row outside the log (contract 18)', () => {
  // The machine these run on is shared and loaded; the assertions are about what happens, not how fast.
  jest.setTimeout(180_000);
  let t: TestApp;
  let logs: CapturedLogs;
  let landlord: Browser;
  let apiKey: string;

  const sealAll = () => sealAllPending(t.app);
  const verify = () => verifyService(t.url, apiKey);

  beforeAll(async () => {
    logs = new CapturedLogs();
    t = await startTestApp({ logger: logs });
    ({ browser: landlord } = await signInAdministrator(t));
    const [admin] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    apiKey = (await createKey(t, landlord, admin.Id, { name: 'verifier' })).apiKey;
    await sealAll();
  }, 180_000);
  afterAll(async () => {
    await t?.close();
  });

  it('finds nothing outside an untouched log, and the verifier passes', async () => {
    expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    expect(await t.app.get(AuditOutside).check()).toBe(0);
    const { code, out } = await verify();
    expect(out.at(-1)).toMatch(/^verified \d+ leaves/);
    expect(code).toBe(0);
  });

  it('names rows slipped in with the triggers off or whose waiting entry was removed; the verifier exits 1; adoption seals them', async () => {
    await asSuperuser(t.db, [
      [`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (900001, '2026-11-20T10:00:00.123456Z', 'forged', 1, false)`],
    ]);
    // Inserted with the triggers on (so waiting), then its waiting entry removed as a superuser could.
    const [change] = await t.db.query<{ Id: string }>(
      `INSERT INTO "AdminChange" ("CreatedUser", "CredentialTypeId", "ActionTypeId", "TargetTable", "Changes") VALUES ('forged', 4, 6, 'UserRegistry', '{}') RETURNING "Id"::text AS "Id"`,
    );
    await t.db.query(`DELETE FROM "AuditPending" WHERE "TableName" = 'AdminChange' AND "RowId" = $1`, [change.Id]);

    const outside = await landlord.get('/api/Audit/Outside');
    expect(outside.status).toBe(200);
    expect(outside.json.total).toBe(2);
    expect(outside.json.rows.map((r: any) => [r.table, r.rowId, r.reason])).toEqual([
      ['UserLogin', '900001', 'not-in-log'],
      ['AdminChange', change.Id, 'not-in-log'],
    ]);
    expect(outside.json.rows[0]).toMatchObject({ createdDate: '2026-11-20T10:00:00.123456Z' });
    expect(JSON.parse(outside.json.rows[0].canonical)).toEqual(['UserLogin', '900001', '2026-11-20T10:00:00.123456Z', 'forged', null, null, 1, false, null, null, null, null, null]);

    expect(await t.app.get(AuditOutside).check()).toBe(2);
    expect(logs.count('error', /2 audit rows are outside the log \(first: UserLogin row 900001/)).toBe(1);

    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.out.at(-1)).toMatch(/^FAILED: 2 rows outside the log; first: table UserLogin row 900001 is outside the log/);

    // Only a landlord adopts; a bad id or table is a 400 and adopts nothing.
    const tenantAdmin = await signInTenantAdministrator(t, 'outside-tenant-admin', 'Tenant-Adm1n-Password!');
    expect((await tenantAdmin.get('/api/Audit/Outside')).status).toBe(403);
    expect((await tenantAdmin.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['900001'] })).status).toBe(403);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserRegistry', rowIds: ['1'] })).status).toBe(400);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['900001', '1'] })).status).toBe(400);

    const adopted = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['900001'] });
    expect(adopted.status).toBe(200);
    expect((await landlord.post('/api/Audit/Outside/Adopt', { table: 'AdminChange', rowIds: [change.Id] })).status).toBe(200);
    await sealAll();
    expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    const adoptions = await t.db.query<{ Changes: string; TargetTable: string; TargetId: string | null; ActionTypeId: number; CreatedUser: string; Failed: boolean }>(
      `SELECT "Changes", "TargetTable", "TargetId", "ActionTypeId", "CreatedUser", "Failed" FROM "AdminChange" WHERE "ActionTypeId" = 14 ORDER BY "Id"`,
    );
    // The tenant administrator's refused adoption is recorded too (Failed, Changes {}); the 400s are not.
    expect(adoptions).toEqual([
      { Changes: '{}', TargetTable: 'UserLogin', TargetId: null, ActionTypeId: ActionTypeId.RowsAdopted, CreatedUser: 'outside-tenant-admin', Failed: true },
      { Changes: '{"rows":[["UserLogin","900001"]]}', TargetTable: 'UserLogin', TargetId: null, ActionTypeId: ActionTypeId.RowsAdopted, CreatedUser: 'Administrator', Failed: false },
      { Changes: `{"rows":[["AdminChange","${change.Id}"]]}`, TargetTable: 'AdminChange', TargetId: null, ActionTypeId: ActionTypeId.RowsAdopted, CreatedUser: 'Administrator', Failed: false },
    ]);
    const proof = await landlord.get('/api/Audit/Proof?table=UserLogin&id=900001');
    expect(proof.status).toBe(200);
    const passed = await verify();
    expect(passed.out.at(-1)).toMatch(/^verified \d+ leaves/);
    expect(passed.code).toBe(0);
  });
});
