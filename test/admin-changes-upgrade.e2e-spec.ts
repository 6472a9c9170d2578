import { generateKeyPairSync } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { leafRecord, sha256, type SealedTableName } from '../src/audit-log/canonical';
import { CompactRange, EMPTY_ROOT, leafHash } from '../src/audit-log/merkle';
import { signCheckpoint } from '../src/audit-log/note';
import { AuditTreeRepository } from '../src/audit-log/audit-tree.repository';
import { run } from '../src/audit-log/verify/main';
import { AuditOutside } from '../src/audit-outside/audit-outside.service';
import { dataSourceOptions, migrate } from '../src/database/data-source';
import { MIGRATIONS } from '../src/database/migrations';
import { AdminChange1767000000000 } from '../src/database/migrations/1767000000000-AdminChange';
import { startTestApp, TestApp } from './helpers/app';
import { createKey } from './helpers/api-keys';
import { canonicalInDatabase } from './helpers/audit-log';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { eventually } from './helpers/eventually';
import { signInAdministrator } from './helpers/users';

const ORIGIN = 'transaction-monitoring/audit/upgrade-test';

/**
 * What the previous version's sealer did to the waiting rows (contract 15, the same algorithm): each
 * becomes a leaf in waiting order (canonical form hashed where the row is, leaf record, leaf hash),
 * the perfect subtrees of every kept level are stored, and a checkpoint of the new size is signed.
 */
async function sealAsThePreviousVersion(old: DataSource, range: CompactRange, privateKey: ReturnType<typeof generateKeyPairSync>['privateKey']): Promise<number> {
  const pending = await old.query<{ Seq: string; TableName: SealedTableName; RowId: string }[]>(
    `SELECT "Seq"::text AS "Seq", "TableName", "RowId"::text AS "RowId" FROM "AuditPending" ORDER BY "Seq"`,
  );
  for (const entry of pending) {
    const [row] = await canonicalInDatabase(old, entry.TableName, [entry.RowId]);
    const canonical = JSON.parse(row.canonical.toString('utf8')) as unknown[];
    const date = canonical[2] as string; // UserLogin and UserLogout: Id, then CreatedDate
    const rowHash = sha256(row.canonical);
    const hash = leafHash(leafRecord(entry.TableName, entry.RowId, date, rowHash));
    const index = range.size;
    const nodes: Array<[number, number, Buffer]> = [];
    range.append(hash, (level, i, h) => {
      if (AuditTreeRepository.kept(level)) nodes.push([level, i, h]);
    });
    await old.query(
      `INSERT INTO "AuditLeaf" ("LeafIndex", "TableName", "RowId", "RowCreatedDate", "RowHash", "LeafHash", "SealedDate") VALUES ($1, $2, $3, $4::timestamptz, $5, $6, now())`,
      [index, entry.TableName, entry.RowId, date, rowHash, hash],
    );
    for (const [level, i, h] of nodes) await old.query(`INSERT INTO "AuditTreeNode" ("Level", "Index", "Hash") VALUES ($1, $2, $3)`, [level, i, h]);
    await old.query(`DELETE FROM "AuditPending" WHERE "Seq" = $1`, [entry.Seq]);
  }
  const root = range.size === 0 ? EMPTY_ROOT : range.root();
  await old.query(`INSERT INTO "AuditCheckpoint" ("TreeSize", "RootHash", "CreatedDate", "Note") VALUES ($1, $2, now(), $3)`, [
    range.size,
    root,
    signCheckpoint(ORIGIN, range.size, root, privateKey),
  ]);
  return range.size;
}

/**
 * An existing install upgraded in place to contract 18 (issue 29): the schema and a sealed log as the
 * version before migration AdminChange left them (UserLogin and UserLogout rows, leaves, kept subtree
 * nodes, signed checkpoints), then today's service started on it with the same signing key. AdminChange
 * appears with its triggers, nothing is outside the log, the old leaves still verify with
 * `npm run audit:verify`'s code, and a new administrative change is recorded and sealed after them.
 */
describe('upgrading a sealed install to administrative changes (contract 18)', () => {
  jest.setTimeout(180_000);
  let db: TestDatabase;
  let t: TestApp;
  let oldLeaves: number;
  const { privateKey } = generateKeyPairSync('ed25519');

  beforeAll(async () => {
    db = await createTestDatabase();
    const before = MIGRATIONS.slice(0, MIGRATIONS.indexOf(AdminChange1767000000000));
    const old = await new DataSource({ ...dataSourceOptions(db.url, 2), migrations: before }).initialize();
    try {
      await migrate(old);
      expect(await old.query(`SELECT to_regclass('"AdminChange"') AS t`)).toEqual([{ t: null }]);
      const range = new CompactRange(0, []);
      await sealAsThePreviousVersion(old, range, privateKey);
      // Sign-ins and sign-outs of the previous version, sealed in two checkpoints.
      for (let i = 0; i < 7; i++) {
        await old.query(
          `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "UserAgent") VALUES ($1, $2, 1, $3, '203.0.113.9', 'curl/8.5.0')`,
          [`2026-10-0${i + 1}T08:00:00.123456Z`, `user-${i}`, i % 3 === 0],
        );
      }
      await sealAsThePreviousVersion(old, range, privateKey);
      for (let i = 0; i < 13; i++) {
        const table = i % 2 ? 'UserLogout' : 'UserLogin';
        if (table === 'UserLogin') {
          await old.query(`INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "AuthenticationTypeId") VALUES ($1, $2, 2)`, [`2026-10-${10 + i}T09:30:00.000001Z`, `later-${i}`]);
        } else {
          await old.query(`INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "ReasonId", "OutcomeId") VALUES ($1, $2, 1, 1)`, [`2026-10-${10 + i}T09:31:00Z`, `later-${i}`]);
        }
      }
      oldLeaves = await sealAsThePreviousVersion(old, range, privateKey);
    } finally {
      await old.destroy();
    }
    expect(oldLeaves).toBe(20);
    t = await startTestApp({ db, env: { AuditSigningKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), AuditLogOrigin: ORIGIN } });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await db?.drop();
  });

  it('adds AdminChange, keeps the old leaves verifying, and records and seals a new change after them', async () => {
    // The table and its database triggers are there.
    const triggers = await db.query<{ tgname: string }>(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%AdminChange%' AND NOT tgisinternal ORDER BY tgname`);
    expect(triggers.map((r) => r.tgname)).toEqual(expect.arrayContaining(['UserRegistry_AdminChange', 'UserRegistry_AdminChangeTruncate', 'AdminChange_AppendOnly']));
    expect(await t.app.get(AuditOutside).check()).toBe(0);

    // Changes through the service after the upgrade: the forced first password change, an API key.
    const { browser: landlord } = await signInAdministrator(t);
    const [admin] = await db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
    const key = await createKey(t, landlord, admin.Id, { name: 'upgrade-verifier' });
    await eventually(async () => {
      await t.app.get(AuditSealer).sealPending();
      return (await db.query(`SELECT 1 FROM "AuditPending"`)).length === 0;
    });

    const leaves = await db.query<{ LeafIndex: string; TableName: string; RowId: string }>(
      `SELECT "LeafIndex"::text AS "LeafIndex", "TableName", "RowId"::text AS "RowId" FROM "AuditLeaf" l ORDER BY l."LeafIndex"`,
    );
    expect(leaves.slice(0, oldLeaves).every((l) => l.TableName === 'UserLogin' || l.TableName === 'UserLogout')).toBe(true);
    const changes = await db.query<{ Id: string; ActionTypeId: number }>(`SELECT "Id"::text AS "Id", "ActionTypeId" FROM "AdminChange" ORDER BY "Id"`);
    expect(changes.map((c) => c.ActionTypeId)).toEqual(expect.arrayContaining([9, 10]));
    const sealedChanges = leaves.filter((l) => l.TableName === 'AdminChange');
    expect(sealedChanges.map((l) => l.RowId).sort()).toEqual(changes.map((c) => c.Id).sort());
    expect(sealedChanges.every((l) => Number(l.LeafIndex) >= oldLeaves)).toBe(true);

    // An old leaf and a new change both prove against the latest checkpoint, signed with the same key.
    const oldProof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${leaves[0].RowId}`);
    expect(oldProof.status).toBe(200);
    expect(oldProof.json.leafIndex).toBe(0);
    const apiKeyChange = changes.find((c) => c.ActionTypeId === 10)!;
    const newProof = await landlord.get(`/api/Audit/Proof?table=AdminChange&id=${apiKeyChange.Id}`);
    expect(newProof.status).toBe(200);
    expect(newProof.json.leafIndex).toBeGreaterThanOrEqual(oldLeaves);

    // The verifier: every leaf, old and new, every checkpoint (the previous version's too, consistent with today's).
    const out: string[] = [];
    const code = await run(['--url', t.url, '--api-key', key.apiKey], (l) => out.push(l), (l) => out.push(l));
    expect(out.at(-1)).toMatch(new RegExp(`^verified ${leaves.length} leaves, \\d+ checkpoints, 0 removed by retention`));
    expect(code).toBe(0);
    const [{ checkpoints }] = await db.query<{ checkpoints: number }>(`SELECT count(*)::int AS checkpoints FROM "AuditCheckpoint" WHERE "TreeSize" <= $1`, [oldLeaves]);
    expect(checkpoints).toBe(3);
  });
});
