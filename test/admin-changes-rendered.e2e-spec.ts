import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DataSource } from 'typeorm';
import { AdminChangeRecorder } from '../src/admin-changes/admin-change.recorder';
import { ActionTypeId } from '../src/admin-changes/admin-change.types';
import { ChangeSide, changesText } from '../src/admin-changes/changes';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { RecordedChanges, SetMember } from '../src/database/recorded-change';
import { TenantRegistry } from '../src/users/tenant-registry.entity';
import { UserRegistry } from '../src/users/user-registry.entity';
import { startTestApp, TestApp } from './helpers/app';

/** Texts JSON.stringify and PostgreSQL could write differently if either escaped on its own terms. */
const AWKWARD = [
  'quote " backslash \\ slash / single \' end',
  'tab\tnewline\nreturn\rbackspace\bformfeed\f',
  'controls \u0001\u001f and delete \u007f',
  'non-ASCII ünïcødé 日本語 😀 \u{10FFFF}',
  'separators \u2028 and \u2029',
  '</script><!--',
  '',
  ' padded ',
];

/** One step: what is set, the members Changes names, and a statement run before it (a value no route writes). */
interface Step {
  set: SetMember[];
  recorded: string[];
  before?: string;
}

const TIMESTAMP_STEPS: Step[] = [
  // The lock date stamped once and kept (the route's `unless-set` form), then replaced and cleared.
  { set: [{ field: 'passwordLocked', value: true }, { field: 'passwordLockedDate', value: new Date('2026-11-27T10:11:12.345Z'), form: 'unless-set' }], recorded: ['passwordLocked', 'passwordLockedDate'] },
  { set: [{ field: 'passwordLockedDate', value: new Date('2026-12-01T00:00:00.000Z'), form: 'unless-set' }], recorded: ['passwordLockedDate'] },
  // Microseconds: written truncated to milliseconds, as a Date read from PostgreSQL holds them.
  { before: `UPDATE "UserRegistry" SET "PasswordLockedDate" = '2026-01-02 03:04:05.678999+00' WHERE "Id" = $1`, set: [{ field: 'passwordLockedDate', value: new Date('2026-01-02T03:04:05.999Z') }], recorded: ['passwordLockedDate'] },
  // Different instants, the same milliseconds: not a change Changes names.
  { before: `UPDATE "UserRegistry" SET "PasswordLockedDate" = '2026-01-02 03:04:05.999999+00' WHERE "Id" = $1`, set: [{ field: 'passwordLockedDate', value: new Date('2026-01-02T03:04:05.999Z') }], recorded: ['passwordLockedDate'] },
  { set: [{ field: 'passwordLockedDate', value: new Date('0999-12-31T23:59:59.001Z') }], recorded: ['passwordLockedDate'] },
  { set: [{ field: 'passwordLocked', value: false }, { field: 'passwordLockedDate', value: null }, { field: 'failedPasswordCount', value: 0 }], recorded: ['passwordLocked', 'passwordLockedDate', 'failedPasswordCount'] },
];

const OTHER_STEPS: Step[] = [
  // Nullable text to and from null; booleans; integers at their edges; several members at once.
  { set: [{ field: 'email', value: null }], recorded: ['email'] },
  { set: [{ field: 'email', value: 'back@example.com' }, { field: 'createdUser', value: null }], recorded: ['email', 'createdUser'] },
  { set: [{ field: 'active', value: false }, { field: 'failedPasswordCount', value: 2147483647 }], recorded: ['active', 'failedPasswordCount'] },
  { set: [{ field: 'active', value: true }, { field: 'failedPasswordCount', value: -5 }, { field: 'wirePasswordHash', value: true }], recorded: ['active', 'failedPasswordCount', 'wirePasswordHash'] },
  // Nothing changes (the value is already there): no AdminChange row, the row answered as it is.
  { set: [{ field: 'active', value: true }], recorded: ['active'] },
];

/**
 * A registry member change renders its Changes text in SQL from the row it locked and the row after
 * (database/recorded-change.ts, docs/decisions/0037). That text must be byte for byte what changesText
 * (admin-changes/changes.ts) writes for the same before and after, as the service reads them: checked
 * here for every member type these statements set (text with quotes, backslashes, controls, non-ASCII
 * and U+2028; nullable text; booleans; integers; the lock date, with microseconds and in the `unless-set`
 * form), on PostgreSQL and on the embedded PGlite.
 */
describe.each([['PostgreSQL'], ['PGlite (embedded)']])('Changes rendered in SQL equals changesText, on %s', (database) => {
  jest.setTimeout(120_000);
  let app: NestExpressApplication;
  let t: TestApp | undefined;
  let db: DataSource;

  beforeAll(async () => {
    if (database === 'PostgreSQL') {
      t = await startTestApp();
      app = t.app;
    } else {
      const settings = resolveSecrets(loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-rendered-')), LogLevel: 'error' }));
      app = await createApp(settings, { logger: ['error'] });
    }
    db = app.get(DataSource);
  }, 120_000);
  afterAll(async () => {
    if (t) await t.close();
    else await app?.close();
  });

  const record = () =>
    app.get(AdminChangeRecorder).memberChangeRow(
      {
        principal: { userRegistryId: null, userName: 'renderer', tenantRegistryId: null, authenticationType: 'Bearer', sessionId: null, apiKeyDisplay: null },
        context: { remoteIp: null, localIp: null, userAgent: null },
      } as never,
      { actionType: ActionTypeId.UserChanged, targetTable: 'UserRegistry', targetId: null, targetName: null, targetTenantRegistryId: null },
    );

  async function newest(): Promise<{ id: string; changes: string }> {
    const [row] = (await db.query(`SELECT coalesce(max("Id"), 0)::text AS id FROM "AdminChange"`)) as { id: string }[];
    const [changes] = (await db.query(`SELECT "Changes" FROM "AdminChange" WHERE "Id" = $1::bigint`, [row.id])) as { Changes: string }[];
    return { id: row.id, changes: changes?.Changes ?? '' };
  }

  /** Runs `steps` on row `id` and checks each recorded Changes against changesText of the rows read before and after. */
  async function check<Row extends object>(entity: new () => Row, id: number, steps: Step[]): Promise<number> {
    const recorded = new RecordedChanges<Row>(db.getMetadata(entity));
    const read = async () => (await db.getRepository(entity).findOneBy({ id } as never)) as Record<string, unknown>;
    let written = 0;
    for (const step of steps) {
      if (step.before) await db.query(step.before, [id]);
      const before = await read();
      const from = await newest();
      const answered = await recorded.change(db.manager, { id, set: step.set, compared: {}, recorded: step.recorded, record: record() });
      const after = await read();
      expect(answered).toEqual(after);
      const pick = (row: Record<string, unknown>): ChangeSide => Object.fromEntries(step.recorded.map((field) => [field, row[field] as never]));
      const expected = changesText(pick(before), pick(after));
      const last = await newest();
      if (expected === '{}') {
        expect(last.id).toBe(from.id);
      } else {
        expect(last.changes).toBe(expected);
        written += 1;
      }
    }
    return written;
  }

  it('for text members with awkward values (a tenant name)', async () => {
    const [{ Id: id }] = (await db.query(`INSERT INTO "TenantRegistry" ("Name") VALUES ('Rendered Bank') RETURNING "Id"`)) as { Id: number }[];
    const steps = AWKWARD.map((name) => ({ set: [{ field: 'name', value: name }], recorded: ['name'] }));
    expect(await check(TenantRegistry, id, [...steps, { set: [{ field: 'active', value: false }, { field: 'name', value: AWKWARD[0] }], recorded: ['active', 'name'] }])).toBe(AWKWARD.length + 1);
  });

  it('for nullable text, booleans, integers and the lock date (a user)', async () => {
    const [{ Id: tenant }] = (await db.query(`INSERT INTO "TenantRegistry" ("Name") VALUES ('Rendered users') RETURNING "Id"`)) as { Id: number }[];
    const [{ Id: role }] = (await db.query(`INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name") VALUES ($1, 'rendered') RETURNING "Id"`, [tenant])) as { Id: number }[];
    const [{ Id: id }] = (await db.query(`INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Email", "CreatedUser") VALUES ($1, 'rendered-user', 'start@example.com', 'someone') RETURNING "Id"`, [role])) as {
      Id: number;
    }[];
    const emails = AWKWARD.map((email) => ({ set: [{ field: 'email', value: email }], recorded: ['email'] }));
    // Every step but the lock date kept (2nd), the same milliseconds (4th) and the change to what is there (last) writes a row.
    expect(await check(UserRegistry, id, [...emails, ...TIMESTAMP_STEPS, ...OTHER_STEPS])).toBe(AWKWARD.length + TIMESTAMP_STEPS.length - 2 + OTHER_STEPS.length - 1);
  });
});
