import { createHash } from 'node:crypto';
import { Client } from 'pg';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { signInAdministrator } from './helpers/users';
import { adminChangesAfter, lastAdminChangeId } from './helpers/admin-changes';
import { sealAllPending } from './helpers/sealing';
import { CapturedLogs } from './helpers/logs';
import { ActionTypeId, CredentialTypeId } from '../src/admin-changes/admin-change.types';
import { serviceChangeMark } from '../src/database/service-change-mark';

/**
 * Contract 18, changes made in the database, as an insider who has read this repository would try to
 * make them unrecorded, with nothing but the right to write the registry tables (no trigger disabled,
 * no superuser power used): set the service's mark himself, or shadow the tables the triggers write
 * with temporary tables of the same name. Each is a plain psql session on PostgreSQL (a pg Client
 * of its own); each change must appear as an AdminChange with CredentialTypeId 4, and the service's
 * own changes made afterwards still exactly once.
 */
describe('changes made in the database cannot borrow the service mark or shadow the record (contract 18)', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let landlord: Browser;
  let psql: Client;
  let tenantId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: landlord } = await signInAdministrator(t));
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Insider Bank' });
    expect(tenant.status).toBe(201);
    tenantId = tenant.json.id;
    psql = new Client({ connectionString: t.db.url });
    await psql.connect();
  }, 120_000);
  afterAll(async () => {
    await psql?.end();
    await t?.close();
  });

  /** Renames the tenant in `psql`'s session inside one transaction that first runs `before`; the new name. */
  async function renameInDatabase(name: string, before: string[] = []): Promise<string> {
    await psql.query('BEGIN');
    try {
      for (const statement of before) await psql.query(statement);
      await psql.query(`UPDATE "TenantRegistry" SET "Name" = $1 WHERE "Id" = $2`, [name, tenantId]);
      await psql.query('COMMIT');
    } catch (error) {
      await psql.query('ROLLBACK');
      throw error;
    }
    return name;
  }

  async function expectRecordedFromDatabase(from: string, name: string): Promise<void> {
    const rows = await adminChangesAfter(t, from);
    const [{ role }] = (await psql.query<{ role: string }>('SELECT current_user AS role')).rows;
    expect(rows.map((r) => [r.CredentialTypeId, r.CredentialId, r.CreatedUser, r.UserRegistryId, r.ActionTypeId, r.TargetTable, r.TargetId, r.TargetName])).toEqual([
      [CredentialTypeId.Database, null, role, null, ActionTypeId.TenantChanged, 'TenantRegistry', String(tenantId), name],
    ]);
    expect(JSON.parse(rows[0].Changes).Name[1]).toBe(name);
  }

  it('records a change whose transaction set the mark by its old public value, or by any guess', async () => {
    for (const [value, name] of [
      ['service', 'Insider Bank (public mark)'],
      ['0'.repeat(64), 'Insider Bank (guessed mark)'],
      ['', 'Insider Bank (empty mark)'],
    ]) {
      const from = await lastAdminChangeId(t);
      await renameInDatabase(name, [`SELECT set_config('app.admin_change', '${value}', true)`]);
      await expectRecordedFromDatabase(from, name);
    }
  });

  it('keeps the mark out of reach: another session reads only its hash, and has no mark of its own to copy', async () => {
    const { rows } = await psql.query<{ mark: string | null; definition: string }>(
      `SELECT current_setting('app.service_mark', true) AS "mark", pg_get_functiondef('"AdminChangeMarked"()'::regprocedure) AS "definition"`,
    );
    expect(rows[0].mark).toBeNull();
    const mark = serviceChangeMark(t.settings.apiHmacKey);
    expect(rows[0].definition).toContain(createHash('sha256').update(mark).digest('hex'));
    expect(rows[0].definition).not.toContain(mark);
    // Copying the mark as the service's statements do fails in a session that does not hold it.
    const from = await lastAdminChangeId(t);
    const name = await renameInDatabase('Insider Bank (copied mark)', [`SELECT set_config('app.admin_change', current_setting('app.service_mark', true), true)`]);
    await expectRecordedFromDatabase(from, name);
  });

  it('records into the real AdminChange when the session shadows AdminChange or AuditPending with temporary tables, or puts its own schema first', async () => {
    await psql.query(`CREATE TEMP TABLE "AdminChange" (LIKE "AdminChange")`);
    await psql.query(`CREATE TEMP TABLE "AuditPending" (LIKE "AuditPending")`);
    // A schema of its own first in its search path, with a sha256 that answers whatever hash the check expects.
    await psql.query(`CREATE SCHEMA IF NOT EXISTS insider`);
    await psql.query(
      `CREATE OR REPLACE FUNCTION insider.sha256(bytea) RETURNS bytea LANGUAGE sql AS $$ SELECT decode(substring(pg_get_functiondef('public."AdminChangeMarked"()'::regprocedure) from 'x([0-9a-f]{64})'), 'hex') $$`,
    );
    await psql.query(`SET search_path = insider, public, pg_catalog`);
    try {
      const from = await lastAdminChangeId(t);
      const name = await renameInDatabase('Insider Bank (shadowed)', [`SELECT set_config('app.admin_change', 'forged', true)`]);
      await expectRecordedFromDatabase(from, name);
      const [{ shadowed }] = (await psql.query<{ shadowed: number }>(`SELECT count(*)::int AS "shadowed" FROM pg_temp."AdminChange"`)).rows;
      expect(shadowed).toBe(0);

      // A sign-in row inserted by the same session waits in the real AuditPending, and is sealed.
      const [{ Id }] = (await psql.query<{ Id: string }>(
        `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp") VALUES ('shadow', 1, false, '198.51.100.9') RETURNING "Id"::text AS "Id"`,
      )).rows;
      expect((await psql.query(`SELECT 1 FROM pg_temp."AuditPending"`)).rows).toEqual([]);
      await sealAllPending(t.app);
      expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${Id}`)).status).toBe(200);
      const outside = await landlord.get('/api/Audit/Outside');
      expect(outside.json).toEqual({ total: 0, rows: [] });
    } finally {
      await psql.query(`RESET search_path`);
      await psql.query(`DROP TABLE pg_temp."AdminChange", pg_temp."AuditPending"`);
      await psql.query(`DROP SCHEMA insider CASCADE`);
    }
  });

  it("still records the service's own change once, as the service's", async () => {
    const from = await lastAdminChangeId(t);
    const res = await landlord.put(`/api/TenantRegistry/${tenantId}`, { name: 'Insider Bank (by the service)' });
    expect(res.status).toBe(200);
    const rows = await adminChangesAfter(t, from);
    expect(rows.map((r) => [r.CredentialTypeId, r.ActionTypeId, r.TargetName])).toEqual([[CredentialTypeId.Cookie, ActionTypeId.TenantChanged, 'Insider Bank (by the service)']]);
  });

  it('warns when a node with another ApiHmacKey replaces the mark, and records that node\'s changes from then on as its own only', async () => {
    const logs = new CapturedLogs();
    const other = await startTestApp({ db: t.db, env: { ApiHmacKey: 'another-deployment-hmac-key-0123456789' }, logger: logs });
    try {
      expect(logs.count('warn', /every node must have the same ApiHmacKey/)).toBe(1);
      const [{ administrator }] = await t.db.query<{ administrator: number }>(`SELECT "Id" AS "administrator" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
      const { browser } = await signInAdministrator(other);
      const from = await lastAdminChangeId(t);
      expect((await browser.put(`/api/UserRegistry/${administrator}`, { email: 'other-node@example.com' })).status).toBe(200);
      const rows = await adminChangesAfter(t, from);
      expect(rows.map((r) => [r.CredentialTypeId, r.ActionTypeId])).toEqual([[CredentialTypeId.Cookie, ActionTypeId.UserChanged]]);
    } finally {
      await other.close();
    }
  });
});
