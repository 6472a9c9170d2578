import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { AuditedRowsRepository } from '../src/audit-log/audited-rows.repository';
import { SealedTableName, canonicalRow, canonicalTimestampSql, LEAF_DATE_COLUMN, leafRecord, sha256 } from '../src/audit-log/canonical';
import { leafHash } from '../src/audit-log/merkle';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { startTestApp } from './helpers/app';
import { canonicalInDatabase } from './helpers/audit-log';

/**
 * The sealer hashes rows inside the database (audited-rows.repository.ts canonicalSql), the routes
 * and every verifier in JavaScript (canonical.ts canonicalRow): the two must write the same bytes for
 * every row, or a sealed row would look tampered with. Rows of hostile text (every control
 * character, quotes, backslashes, U+2028/2029, BOM, DEL, C1 controls, astral characters, combining
 * marks), dates at the edges, nulls, infinity, a negative Id: the canonical form PostgreSQL writes is
 * byte-identical to canonicalRow over the same row read as text, both refuse the same rows, the hashes
 * the enqueue trigger writes (migration PendingHashes, a frozen copy of canonicalSql) are the ones
 * computed here, and the leaves the sealer writes carry exactly the row hash and leaf hash computed
 * here. On PostgreSQL and on PGlite (the embedded default).
 */

/** Characters chosen for what JSON escaping could get wrong. */
const NASTY = [
  ...Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)),
  '"', '\\', '/', "'", '\u007f', '\u0080', '\u009f', '\u00a0', '\u00e9', 'e\u0301', '\u2028', '\u2029', '\ufeff', '\ufffd',
  '\u{1f600}', '\u{10ffff}', '\u4e2d', '<', '>', '&', '%', '`', '$', '{', '}', '[', ']', ',', ':', 'a', 'Z', '0', ' ',
];

/** A deterministic generator (mulberry32), so a failure names the same rows on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ROWS = 120;

/** A text of at most `max` code points, or sometimes null. */
function texts(next: () => number, max: number): (string | null)[] {
  return Array.from({ length: ROWS }, (_, i) => {
    if (i % 17 === 5) return null;
    if (i % 23 === 7) return '';
    const length = 1 + Math.floor(next() * max);
    return Array.from({ length }, () => NASTY[Math.floor(next() * NASTY.length)]).join('');
  });
}

/** Dates with microseconds across the range canonical forms can hold, as PostgreSQL input text. */
function dates(next: () => number): string[] {
  return Array.from({ length: ROWS }, (_, i) => {
    if (i === 0) return '0001-01-01 00:00:00+00';
    if (i === 1) return '9999-12-31 23:59:59.999999+00';
    if (i === 2) return '2026-11-25 19:19:32.100000+00';
    // Still years of four digits in UTC (the length check of sealableSql must accept them as canonicalRow does).
    if (i === 3) return '10000-01-01 00:30:00+01';
    if (i === 4) return '0044-03-15 12:00:00+00 BC';
    if (i === 5) return '4713-01-01 00:00:00+00 BC';
    const ms = Math.floor(next() * 4_102_444_800_000);
    return `${new Date(ms).toISOString().slice(0, 19)}.${String(Math.floor(next() * 1_000_000)).padStart(6, '0')}+00`;
  });
}

async function insertHostileRows(db: EntityManager): Promise<Record<SealedTableName, string[]>> {
  const next = random(19);
  /** Within smallint: some of these columns are. */
  const ints = () => Array.from({ length: ROWS }, (_, i) => (i % 11 === 3 ? null : String(Math.floor(next() * 60_000) - 30_000)));
  const logins = (await db.query(
    `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed", "FailureTypeId", "FailureMessage", "RemoteIp", "LocalIp", "UserAgent")
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::int[], $4::int[], $5::int[], $6::bool[], $7::int[], $8::text[], $9::text[], $10::text[], $11::text[])
     RETURNING "Id"::text AS "id"`,
    [
      dates(next),
      texts(next, 60),
      ints(),
      ints(),
      Array.from({ length: ROWS }, (_, i) => 1 + (i % 5)),
      Array.from({ length: ROWS }, (_, i) => i % 2 === 0),
      ints(),
      texts(next, 200),
      texts(next, 30),
      texts(next, 30),
      texts(next, 150),
    ],
  )) as { id: string }[];
  const logouts = (await db.query(
    `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "RemoteIp", "LocalIp", "UserAgent", "SessionStartDate", "CutByUser", "Message")
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::int[], $4::int[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[], $10::timestamptz[], $11::text[], $12::text[])
     RETURNING "Id"::text AS "id"`,
    [
      dates(next),
      texts(next, 60),
      ints(),
      ints(),
      Array.from({ length: ROWS }, (_, i) => 1 + (i % 4)),
      Array.from({ length: ROWS }, (_, i) => 1 + (i % 3)),
      texts(next, 30),
      texts(next, 30),
      texts(next, 150),
      dates(next).map((d, i) => (i % 9 === 4 ? null : i % 31 === 6 ? 'infinity' : d)),
      texts(next, 60),
      texts(next, 150),
    ],
  )) as { id: string }[];
  // Rows no canonical form can hold, written by hand: both sides must refuse them, and the sealer leave them out.
  const odd = (await db.query(
    `INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "AuthenticationTypeId") VALUES (-19, now(), 'negative id', 1) RETURNING "Id"::text AS "id"`,
  )) as { id: string }[];
  const far = (await db.query(
    `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "SessionStartDate") VALUES (now(), 'year 10000', '10000-01-01 00:00:00+00'), ('infinity', 'infinite', NULL),
       (now(), 'year 10000 in UTC only', '9999-12-31 23:30:00-01'), (now(), 'minus infinity', '-infinity'), (now(), 'far future', '294276-12-31 23:59:59+00')
     RETURNING "Id"::text AS "id"`,
  )) as { id: string }[];
  return {
    UserLogin: [...logins, ...odd].map((r) => r.id),
    UserLogout: [...logouts, ...far].map((r) => r.id),
    AuditRetentionRun: [],
    AdminChange: [],
  };
}

/** Hostile AdminChange rows (contract 18: the third sealed table), bigint TargetIds past 2^53 among them. */
async function insertHostileAdminChanges(db: EntityManager): Promise<string[]> {
  const next = random(29);
  const ints = () => Array.from({ length: ROWS }, (_, i) => (i % 11 === 3 ? null : String(Math.floor(next() * 60_000) - 30_000)));
  const rows = (await db.query(
    `INSERT INTO "AdminChange" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "CredentialTypeId", "CredentialId", "ActionTypeId",
                                "TargetTable", "TargetId", "TargetName", "TargetTenantRegistryId", "Failed", "Changes", "RemoteIp", "LocalIp", "UserAgent")
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::int[], $4::int[], $5::int[], $6::text[], $7::int[], $8::text[], $9::bigint[], $10::text[],
                          $11::int[], $12::bool[], $13::text[], $14::text[], $15::text[], $16::text[])
     RETURNING "Id"::text AS "id"`,
    [
      dates(next),
      texts(next, 60),
      ints(),
      ints(),
      Array.from({ length: ROWS }, (_, i) => 1 + (i % 4)),
      texts(next, 30),
      Array.from({ length: ROWS }, (_, i) => 1 + (i % 20)),
      texts(next, 15).map((t) => t ?? 'UserRegistry'),
      Array.from({ length: ROWS }, (_, i) => (i % 13 === 2 ? null : i % 7 === 1 ? '9007199254740993' : String(i))),
      texts(next, 60),
      ints(),
      Array.from({ length: ROWS }, (_, i) => i % 3 === 0),
      texts(next, 400).map((t) => t ?? '{}'),
      texts(next, 30),
      texts(next, 30),
      texts(next, 150),
    ],
  )) as { id: string }[];
  return rows.map((r) => r.id);
}

/** AdminChange's canonical form from PostgreSQL and from canonicalRow agree byte for byte, and so do its sealed leaves. */
async function checkAdminChange(app: INestApplication, db: DataSource): Promise<void> {
  // Inserted and their pending entries read in one transaction: no seal can consume them meanwhile.
  const { ids, pending } = await db.transaction(async (m) => {
    const inserted = await insertHostileAdminChanges(m);
    return { ids: inserted, pending: await pendingOf(m, 'AdminChange', inserted) };
  });
  const rows = app.get(AuditedRowsRepository);
  const inJs = new Map((await rows.byIds('AdminChange', ids)).map((row) => [row.Id as string, row]));
  for (const id of ids) expectPendingAsInJs('AdminChange', inJs.get(id)!, pending.get(id));
  const inDb = await canonicalInDatabase(db, 'AdminChange', ids);
  expect(inDb).toHaveLength(ROWS);
  for (const { id, canonical, sealable } of inDb) {
    const js = sealableInJs('AdminChange', inJs.get(id)!);
    expect({ id, sealable }).toEqual({ id, sealable: js !== null });
    expect(canonical.toString('utf8')).toBe(js!.toString('utf8'));
  }
  expect(inDb.some((r) => r.canonical.toString('utf8').includes(',9007199254740993,'))).toBe(true);
  await app.get(AuditSealer).sealPending();
  const leaves = (await db.query(
    `SELECT "RowId"::text AS "id", "RowHash" AS "rowHash", "LeafHash" AS "leafHash" FROM "AuditLeaf" WHERE "TableName" = 'AdminChange' AND "RowId" = ANY($1::bigint[])`,
    [ids],
  )) as { id: string; rowHash: Buffer; leafHash: Buffer }[];
  expect(leaves).toHaveLength(ROWS);
  for (const leaf of leaves) {
    const row = inJs.get(leaf.id)!;
    const rowHash = sha256(canonicalRow('AdminChange', row));
    expect(leaf.rowHash.equals(rowHash)).toBe(true);
    expect(leaf.leafHash.equals(leafHash(leafRecord('AdminChange', leaf.id, row.CreatedDate as string, rowHash)))).toBe(true);
  }
}

/** What the enqueue trigger wrote for these rows (migration PendingHashes), read in the inserting transaction, before any seal. */
async function pendingOf(db: EntityManager, table: SealedTableName, ids: string[]): Promise<Map<string, { date: string | null; rowHash: Buffer | null; leafHash: Buffer | null }>> {
  const rows = (await db.query(
    `SELECT "RowId"::text AS "id", ${canonicalTimestampSql('"RowCreatedDate"')} AS "date", "RowHash" AS "rowHash", "LeafHash" AS "leafHash"
       FROM "AuditPending" WHERE "TableName" = $1 AND "RowId" = ANY($2::bigint[])`,
    [table, ids],
  )) as { id: string; date: string | null; rowHash: Buffer | null; leafHash: Buffer | null }[];
  return new Map(rows.map(({ id, ...rest }) => [id, rest]));
}

/**
 * The trigger's hashes are the ones canonicalRow gives over the row as the routes read it: RowHash,
 * LeafHash and the leaf date for every row both sides accept, NULL hashes for every row they refuse
 * (the sealer's careful statement then names it). These are what the fast statement seals unread.
 */
function expectPendingAsInJs(table: SealedTableName, row: Record<string, string | boolean | null>, pending: { date: string | null; rowHash: Buffer | null; leafHash: Buffer | null } | undefined): void {
  expect(pending).toBeDefined();
  const canonical = sealableInJs(table, row);
  if (canonical === null) {
    expect({ table, id: row.Id, rowHash: pending!.rowHash, leafHash: pending!.leafHash }).toEqual({ table, id: row.Id, rowHash: null, leafHash: null });
    return;
  }
  const rowHash = sha256(canonical);
  const date = row[LEAF_DATE_COLUMN[table]] as string;
  expect({ table, id: row.Id, date: pending!.date }).toEqual({ table, id: row.Id, date });
  expect(pending!.rowHash?.equals(rowHash)).toBe(true);
  expect(pending!.leafHash?.equals(leafHash(leafRecord(table, row.Id as string, date, rowHash)))).toBe(true);
}

function sealableInJs(table: SealedTableName, row: Record<string, string | boolean | null>): Buffer | null {
  try {
    const canonical = canonicalRow(table, row);
    leafRecord(table, row.Id as string, row[LEAF_DATE_COLUMN[table]] as string, sha256(canonical));
    return canonical;
  } catch {
    return null;
  }
}

async function checkBothSides(app: INestApplication, db: DataSource): Promise<void> {
  const { ids, pending } = await db.transaction(async (m) => {
    const inserted = await insertHostileRows(m);
    return { ids: inserted, pending: { UserLogin: await pendingOf(m, 'UserLogin', inserted.UserLogin), UserLogout: await pendingOf(m, 'UserLogout', inserted.UserLogout) } };
  });
  const rows = app.get(AuditedRowsRepository);
  let compared = 0;
  let refused = 0;
  for (const table of ['UserLogin', 'UserLogout'] as const) {
    const inJs = new Map((await rows.byIds(table, ids[table])).map((row) => [row.Id as string, row]));
    const inDb = await canonicalInDatabase(db, table, ids[table]);
    expect(inDb.map((r) => r.id).sort()).toEqual([...inJs.keys()].sort());
    for (const { id, canonical, sealable } of inDb) {
      const js = sealableInJs(table, inJs.get(id)!);
      expect({ table, id, sealable }).toEqual({ table, id, sealable: js !== null });
      expectPendingAsInJs(table, inJs.get(id)!, pending[table].get(id));
      if (js === null) {
        refused++;
        continue;
      }
      // Compared as text first, so a failure shows the differing characters.
      expect(canonical.toString('utf8')).toBe(js.toString('utf8'));
      expect(canonical.equals(js)).toBe(true);
      compared++;
    }
  }
  // The hand-written rows: a SessionStartDate of -infinity is written null by both sides (as infinity is), so
  // that row is compared; the negative Id, the years past 9999 (in UTC) and the infinite leaf date are refused.
  expect(compared).toBe(2 * ROWS + 1);
  expect(refused).toBe(5);

  // The sealer's leaves carry the hashes computed here from the row as the routes read it.
  await app.get(AuditSealer).sealPending();
  for (const table of ['UserLogin', 'UserLogout'] as const) {
    const leaves = (await db.query(
      `SELECT "RowId"::text AS "id", "RowHash" AS "rowHash", "LeafHash" AS "leafHash" FROM "AuditLeaf" WHERE "TableName" = $1 AND "RowId" = ANY($2::bigint[])`,
      [table, ids[table]],
    )) as { id: string; rowHash: Buffer; leafHash: Buffer }[];
    // Every generated row, and of the hand-written ones the logout whose SessionStartDate is -infinity.
    expect(leaves).toHaveLength(table === 'UserLogout' ? ROWS + 1 : ROWS);
    const inJs = new Map((await rows.byIds(table, ids[table])).map((row) => [row.Id as string, row]));
    for (const leaf of leaves) {
      const row = inJs.get(leaf.id)!;
      const rowHash = sha256(canonicalRow(table, row));
      expect(leaf.rowHash.equals(rowHash)).toBe(true);
      expect(leaf.leafHash.equals(leafHash(leafRecord(table, leaf.id, row[LEAF_DATE_COLUMN[table]] as string, rowHash)))).toBe(true);
    }
  }
}

describe('the canonical form written by PostgreSQL is canonicalRow, byte for byte', () => {
  it('on PostgreSQL', async () => {
    const t = await startTestApp();
    try {
      await checkBothSides(t.app, t.app.get(DataSource));
      await checkAdminChange(t.app, t.app.get(DataSource));
    } finally {
      await t.close();
    }
  });

  it('on PGlite (the embedded database)', async () => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-canonical-sql-')), LogLevel: 'error' }));
    const app = await createApp(settings, { logger: ['error'] });
    try {
      await checkBothSides(app, app.get(DataSource));
      await checkAdminChange(app, app.get(DataSource));
    } finally {
      await app.close();
    }
    // PGlite runs PostgreSQL in WebAssembly: three tables of hostile rows take minutes on a loaded machine.
  }, 300_000);
});
