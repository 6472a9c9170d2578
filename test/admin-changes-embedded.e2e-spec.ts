import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap';
import { run } from '../src/audit-log/verify/main';
import { AuditOutside } from '../src/audit-outside/audit-outside.service';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { Browser } from './helpers/http';
import { firstAdministratorSignIn } from './helpers/users';
import { sealAllPending } from './helpers/sealing';

const ADMIN_PASSWORD = 'Embedded-Adm1n-Pass';

/**
 * Contract 18 on the embedded default (PGlite, no ConnectionString): a change through the API is an
 * AdminChange row sealed into the log; a change made in the database is recorded by the registry
 * triggers (CredentialTypeId 4); and a row slipped into a sealed table past the triggers is found
 * outside the log, fails the verifier, and verifies once adopted. PGlite is PostgreSQL itself and its
 * one user is a superuser, so the row is slipped the way test/audit-outside.e2e-spec.ts does it on
 * PostgreSQL: `SET LOCAL session_replication_role = replica` in the inserting transaction.
 * Run it with `npm test -- test/admin-changes-embedded.e2e-spec.ts` (PGlite needs --experimental-vm-modules).
 */
describe('administrative changes and no row outside the log, on the embedded database (contract 18)', () => {
  let app: NestExpressApplication;
  let db: DataSource;
  let url: string;

  beforeAll(async () => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-admin-embedded-')), LogLevel: 'error' }));
    app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
    db = app.get(DataSource);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
  });

  const sealAll = () => sealAllPending(app);

  it('records and seals changes, and finds, reports and adopts a row slipped past the triggers', async () => {
    const landlord = new Browser(url);
    expect((await firstAdministratorSignIn(landlord, ADMIN_PASSWORD)).status).toBe(200);
    const tenant = await landlord.post('/api/TenantRegistry', { name: 'Embedded Bank' });
    expect(tenant.status).toBe(201);
    // A change made in the database, without the service.
    await db.query(`UPDATE "TenantRegistry" SET "Active" = false WHERE "Id" = $1`, [tenant.json.id]);
    const [admin] = (await db.query(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`)) as { Id: number }[];
    const key = await landlord.post(`/api/UserRegistry/${admin.Id}/ApiKey`, { name: 'embedded-verifier' });
    expect(key.status).toBe(201);
    // Changes made by compare-and-set, each with its row in one statement (docs/decisions/0034), on PGlite too.
    const renamed = await landlord.put(`/api/TenantRegistry/${tenant.json.id}`, { name: 'Embedded Bank renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toEqual({ id: tenant.json.id, name: 'Embedded Bank renamed', landlord: false, active: false });
    const mailed = await landlord.put(`/api/UserRegistry/${admin.Id}`, { email: 'embedded@example.com' });
    expect(mailed.status).toBe(200);
    expect(mailed.json.email).toBe('embedded@example.com');

    const changes = (await db.query(
      `SELECT "ActionTypeId", "CredentialTypeId", "CreatedUser", "TargetTable", "Changes" FROM "AdminChange" ORDER BY "Id"`,
    )) as { ActionTypeId: number; CredentialTypeId: number; CreatedUser: string; TargetTable: string; Changes: string }[];
    expect(changes.map((c) => [c.ActionTypeId, c.CredentialTypeId, c.TargetTable])).toEqual([
      [9, 3, 'UserRegistry'],
      [1, 3, 'TenantRegistry'],
      [2, 4, 'TenantRegistry'],
      [10, 3, 'UserRegistryApiKey'],
      [2, 3, 'TenantRegistry'],
      [6, 3, 'UserRegistry'],
    ]);
    expect(changes[1].Changes).toBe('{"active":[null,true],"landlord":[null,false],"name":[null,"Embedded Bank"]}');
    expect(changes[2].Changes).toBe('{"Active":[true,false]}');
    expect(changes[4].Changes).toBe('{"name":["Embedded Bank","Embedded Bank renamed"]}');
    expect(changes[5].Changes).toBe('{"email":[null,"embedded@example.com"]}');
    await sealAll();
    const read = await landlord.get('/api/AdminChange?take=10');
    expect(read.status).toBe(200);
    expect(read.json.rows.map((r: any) => r.actionType)).toEqual(['UserChanged', 'TenantChanged', 'ApiKeyCreated', 'TenantChanged', 'TenantCreated', 'PasswordChanged']);
    const [{ id: tenantChange }] = (await db.query(`SELECT "Id"::text AS id FROM "AdminChange" WHERE "ActionTypeId" = 1`)) as { id: string }[];
    expect((await landlord.get(`/api/Audit/Proof?table=AdminChange&id=${tenantChange}`)).status).toBe(200);

    const verify = async () => {
      const out: string[] = [];
      const code = await run(['--url', url, '--api-key', key.json.apiKey], (l) => out.push(l), (l) => out.push(l));
      return { code, last: out.at(-1) };
    };
    expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    expect((await verify()).code).toBe(0);

    // A forged sign-in row, inserted as the database superuser with the triggers off.
    await db.transaction(async (tx) => {
      await tx.query(`SET LOCAL session_replication_role = replica`);
      await tx.query(`INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed") VALUES (900001, '2026-11-20T10:00:00.123456Z', 'forged', 1, false)`);
    });
    expect(await db.query(`SELECT 1 FROM "AuditPending" WHERE "TableName" = 'UserLogin' AND "RowId" = 900001`)).toEqual([]);
    const outside = await landlord.get('/api/Audit/Outside');
    expect(outside.json.total).toBe(1);
    expect(outside.json.rows[0]).toMatchObject({ table: 'UserLogin', rowId: '900001', reason: 'not-in-log', createdDate: '2026-11-20T10:00:00.123456Z' });
    expect(await app.get(AuditOutside).check()).toBe(1);
    const failed = await verify();
    expect(failed.code).toBe(1);
    expect(failed.last).toMatch(/^FAILED: 1 rows outside the log; first: table UserLogin row 900001 is outside the log/);

    const adopted = await landlord.post('/api/Audit/Outside/Adopt', { table: 'UserLogin', rowIds: ['900001'] });
    expect(adopted.status).toBe(200);
    await sealAll();
    expect((await landlord.get('/api/Audit/Outside')).json).toEqual({ total: 0, rows: [] });
    const [adoption] = (await db.query(`SELECT "Changes", "Failed" FROM "AdminChange" WHERE "ActionTypeId" = 14`)) as { Changes: string; Failed: boolean }[];
    expect(adoption).toEqual({ Changes: '{"rows":[["UserLogin","900001"]]}', Failed: false });
    const passed = await verify();
    expect(passed.last).toMatch(/^verified \d+ leaves/);
    expect(passed.code).toBe(0);

    // A TRUNCATE made in the database is recorded too (as the deletion of every row it removed).
    await db.query(`TRUNCATE "UserRegistryApiKey"`);
    const truncated = (await db.query(`SELECT "ActionTypeId", "CredentialTypeId", "TargetName", "Changes" FROM "AdminChange" WHERE "CredentialTypeId" = 4 AND "ActionTypeId" = 11`)) as {
      ActionTypeId: number;
      CredentialTypeId: number;
      TargetName: string;
      Changes: string;
    }[];
    expect(truncated.map((r) => r.TargetName)).toEqual(['embedded-verifier']);
    expect(JSON.parse(truncated[0].Changes).ApiKey).toEqual(['(secret)', null]);
    expect(truncated[0].Changes).not.toContain(key.json.apiKey);
  }, 120_000);

  it('records a change made in the database whose transaction set the mark by its old public value (the mark is the service secret here too)', async () => {
    const [{ max }] = (await db.query(`SELECT coalesce(max("Id"), 0)::text AS "max" FROM "AdminChange"`)) as { max: string }[];
    await db.transaction(async (tx) => {
      await tx.query(`SELECT set_config('app.admin_change', 'service', true)`);
      await tx.query(`UPDATE "TenantRegistry" SET "Name" = 'Forged mark' WHERE "Name" = 'Embedded Bank renamed'`);
    });
    const rows = (await db.query(`SELECT "ActionTypeId", "CredentialTypeId", "TargetName", "Changes" FROM "AdminChange" WHERE "Id" > $1::bigint`, [max])) as {
      ActionTypeId: number;
      CredentialTypeId: number;
      TargetName: string;
      Changes: string;
    }[];
    expect(rows).toEqual([{ ActionTypeId: 2, CredentialTypeId: 4, TargetName: 'Forged mark', Changes: '{"Name":["Embedded Bank renamed","Forged mark"]}' }]);
  });
});
