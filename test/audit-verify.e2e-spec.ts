import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditedRowsRepository } from '../src/audit-log/audited-rows.repository';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { canonicalRow, leafRecord, sha256 } from '../src/audit-log/canonical';
import { leafHash } from '../src/audit-log/merkle';
import { parseCheckpoint } from '../src/audit-log/note';
import { createKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { asSuperuser } from './helpers/audit-log';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';
import { sealAllPending } from './helpers/sealing';

const ROOT = join(__dirname, '..');
const VERIFIER = join(ROOT, 'dist', 'audit-log', 'verify', 'main.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  last: string;
}

/** Runs a command to its end, as a user would in a terminal (a child process, no shared state). */
function runCommand(command: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      const lines = stdout.trim().split('\n');
      resolve({ code, stdout, stderr, last: lines[lines.length - 1] });
    });
  });
}

/**
 * `npm run audit:verify` (contract 15) as a child process against the real service on PostgreSQL,
 * tampered with as the database superuser would: triggers off (`session_replication_role = replica`),
 * then a row changed, a row deleted, two leaves swapped, a checkpoint's root replaced, the history cut
 * back. Each tampering is undone before the next, so each failure names its own first bad leaf.
 */
describe('npm run audit:verify against the real service', () => {
  let t: TestApp;
  let apiKey: string;
  let verifierKey: string;
  let dir: string;

  const verify = (...extra: string[]) => {
    // Built by the first test (`npm run audit:verify` builds before it runs).
    if (!existsSync(VERIFIER)) throw new Error(`${VERIFIER} is missing: run the whole file, or npm run build first`);
    return runCommand(process.execPath, [VERIFIER, '--url', t.url, '--api-key', apiKey, '--verifier-key', verifierKey, ...extra]);
  };

  /** What the one-second job does, until nothing waits: a test need not wait for the timer. */
  const sealAll = () => sealAllPending(t.app, 60_000);


  const leafOf = async (table: string, id: string): Promise<number> =>
    Number((await t.db.query<{ i: string }>(`SELECT "LeafIndex"::text AS i FROM "AuditLeaf" WHERE "TableName" = $1 AND "RowId" = $2`, [table, id]))[0].i);
  const treeSize = async (): Promise<number> =>
    Number((await t.db.query<{ n: string }>(`SELECT max("TreeSize")::text AS n FROM "AuditCheckpoint"`))[0].n);
  /** The first leaf of the checkpoint that sealed bob, carol, dave and alice's logout (one statement, one seal). */
  const batchStart = async (): Promise<number> => {
    const [{ Id: bob }] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" WHERE "CreatedUser" = 'bob'`);
    const bobLeaf = await leafOf('UserLogin', bob);
    return Number((await t.db.query<{ n: string }>(`SELECT max("TreeSize")::text AS n FROM "AuditCheckpoint" WHERE "TreeSize" <= $1`, [bobLeaf]))[0].n);
  };
  const checkpointCount = async (): Promise<number> => (await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditCheckpoint"`))[0].n;

  const insertLogins = (users: string[]) =>
    t.db.query<{ Id: string }>(
      `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp", "UserAgent")
       SELECT u, 1, false, '198.51.100.7', 'curl/8.5.0' FROM unnest($1::text[]) AS u RETURNING "Id"::text AS "Id"`,
      [users],
    );
  const insertLogout = (user: string) =>
    t.db.query<{ Id: string }>(
      `INSERT INTO "UserLogout" ("CreatedUser", "ReasonId", "OutcomeId", "Message") VALUES ($1, 1, 1, 'signed out') RETURNING "Id"::text AS "Id"`,
      [user],
    );

  beforeAll(async () => {
    t = await startTestApp();
    const { browser: admin } = await signInAdministrator(t);
    const auditor = await insertUser(t, { name: 'auditor', password: 'Audit0r-Password!Strong', landlord: true, permissions: [Permission.ReadWriteSecurityUser] });
    apiKey = (await createKey(t, admin, auditor.id)).apiKey;
    verifierKey = (await admin.get('/api/Audit/PublicKey')).json.verifierKey as string;
    // A few checkpoints, one holding several leaves at once (one statement, one seal).
    await sealAll();
    await insertLogins(['alice']);
    await sealAll();
    await insertLogins(['bob', 'carol', 'dave']);
    await insertLogout('alice');
    await sealAll();
    await insertLogins(['erin']);
    await sealAll();
    dir = mkdtempSync(join(tmpdir(), 'audit-verify-e2e-'));
  }, 120_000);
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t?.close();
  });

  it('passes the untouched log through `npm run audit:verify` on a fresh build, with the summary line', async () => {
    const size = await treeSize();
    const run = await runCommand('npm', ['run', '--silent', 'audit:verify', '--', '--url', t.url, '--api-key', apiKey, '--verifier-key', verifierKey]);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(run.last).toBe(`verified ${size} leaves, ${await checkpointCount()} checkpoints, 0 removed by retention`);
    expect(existsSync(VERIFIER)).toBe(true);
  }, 300_000);

  it('names the first changed row', async () => {
    const [{ Id: id }] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" WHERE "CreatedUser" = 'carol'`);
    await asSuperuser(t.db, [[`UPDATE "UserLogin" SET "UserAgent" = 'x' WHERE "Id" = $1`, [id]]]);
    try {
      const run = await verify();
      expect(run.code).toBe(1);
      expect(run.last).toBe(`FAILED: leaf ${await leafOf('UserLogin', id)} (UserLogin ${id}): row changed (its canonical form no longer hashes to the sealed row hash)`);
    } finally {
      await asSuperuser(t.db, [[`UPDATE "UserLogin" SET "UserAgent" = 'curl/8.5.0' WHERE "Id" = $1`, [id]]]);
    }
    expect((await verify()).code).toBe(0);
  });

  it('names the leaves a row hides in when its leaf was rewritten to match it', async () => {
    const [{ Id: id }] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" WHERE "CreatedUser" = 'carol'`);
    const index = await leafOf('UserLogin', id);
    const [leaf] = await t.db.query<{ RowHash: Buffer; LeafHash: Buffer; date: string }>(
      `SELECT "RowHash", "LeafHash", to_char("RowCreatedDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS date FROM "AuditLeaf" WHERE "LeafIndex" = $1`,
      [index],
    );
    // The attacker changes the row, then recomputes its row hash and leaf hash as the sealer would.
    const row = (await t.app.get(AuditedRowsRepository).byIds('UserLogin', [id]))[0];
    const forged = sha256(canonicalRow('UserLogin', { ...row, UserAgent: 'x' }));
    await asSuperuser(t.db, [
      [`UPDATE "UserLogin" SET "UserAgent" = 'x' WHERE "Id" = $1`, [id]],
      [`UPDATE "AuditLeaf" SET "RowHash" = $1, "LeafHash" = $2 WHERE "LeafIndex" = $3`, [forged, leafHash(leafRecord('UserLogin', id, leaf.date, forged)), index]],
    ]);
    try {
      const run = await verify();
      expect(run.code).toBe(1);
      const match = /^FAILED: leaf (\d+) \(\w+ \d+\): (?:not the leaf checkpoint \d+ signed at that index|the first of leaves \d+ to (\d+), which checkpoint \d+ does not prove)/.exec(run.last);
      expect(match).not.toBeNull();
      // The leaf named first is carol's, or the first of a run of leaves that holds it.
      expect(Number(match![1])).toBeLessThanOrEqual(index);
      expect(Number(match![2] ?? match![1])).toBeGreaterThanOrEqual(index);
    } finally {
      await asSuperuser(t.db, [
        [`UPDATE "UserLogin" SET "UserAgent" = 'curl/8.5.0' WHERE "Id" = $1`, [id]],
        [`UPDATE "AuditLeaf" SET "RowHash" = $1, "LeafHash" = $2 WHERE "LeafIndex" = $3`, [leaf.RowHash, leaf.LeafHash, index]],
      ]);
    }
    expect((await verify()).code).toBe(0);
  });

  it('names a deleted row that no retention run covers', async () => {
    const [{ Id: id }] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogout" WHERE "CreatedUser" = 'alice'`);
    // Kept aside in SQL (microseconds and all) to be put back after.
    await asSuperuser(t.db, [
      [`CREATE TABLE "KeptLogout" AS SELECT * FROM "UserLogout" WHERE "Id" = $1`, [id]],
      [`DELETE FROM "UserLogout" WHERE "Id" = $1`, [id]],
    ]);
    try {
      const run = await verify();
      expect(run.code).toBe(1);
      expect(run.last).toMatch(new RegExp(`^FAILED: leaf ${await leafOf('UserLogout', id)} \\(UserLogout ${id}\\): row missing, and no sealed retention run of UserLogout covers its date `));
    } finally {
      await asSuperuser(t.db, [[`INSERT INTO "UserLogout" SELECT * FROM "KeptLogout"`], [`DROP TABLE "KeptLogout"`]]);
    }
    expect((await verify()).code).toBe(0);
  });

  it('names two swapped leaves as reordered', async () => {
    // The first two leaves of the checkpoint that sealed four rows at once.
    const first = await batchStart();
    const leaves = await t.db.query<{ TableName: string; RowId: string }>(
      `SELECT "TableName", "RowId"::text AS "RowId" FROM "AuditLeaf" WHERE "LeafIndex" IN ($1, $2) ORDER BY "LeafIndex"`,
      [first, first + 1],
    );
    const swap: Array<[string, unknown[]]> = [
      [`UPDATE "AuditLeaf" SET "LeafIndex" = -1 WHERE "LeafIndex" = $1`, [first]],
      [`UPDATE "AuditLeaf" SET "LeafIndex" = $1 WHERE "LeafIndex" = $2`, [first, first + 1]],
      [`UPDATE "AuditLeaf" SET "LeafIndex" = $1 WHERE "LeafIndex" = -1`, [first + 1]],
    ];
    await asSuperuser(t.db, swap);
    try {
      const run = await verify();
      expect(run.code).toBe(1);
      expect(run.last).toMatch(
        new RegExp(
          `^FAILED: leaf ${first} \\(${leaves[1].TableName} ${leaves[1].RowId}\\): leaves reordered, it was signed at leaf ${first + 1}, and leaf ${first + 1} \\(${leaves[0].TableName} ${leaves[0].RowId}\\) at leaf ${first} \\(checkpoint \\d+\\)$`,
        ),
      );
    } finally {
      await asSuperuser(t.db, swap);
    }
    expect((await verify()).code).toBe(0);
  });

  it('names a checkpoint whose root was replaced', async () => {
    const checkpoints = await t.db.query<{ TreeSize: string; RootHash: Buffer }>(`SELECT "TreeSize"::text AS "TreeSize", "RootHash" FROM "AuditCheckpoint" ORDER BY "TreeSize"`);
    const [victim, other] = [checkpoints[checkpoints.length - 2], checkpoints[checkpoints.length - 1]];
    await asSuperuser(t.db, [[`UPDATE "AuditCheckpoint" SET "RootHash" = $1 WHERE "TreeSize" = $2`, [other.RootHash, victim.TreeSize]]]);
    try {
      const run = await verify();
      expect(run.code).toBe(1);
      expect(run.last).toBe(
        `FAILED: checkpoint ${victim.TreeSize}: root replaced (the stored root hash ${other.RootHash.toString('base64')} is not the signed ${victim.RootHash.toString('base64')})`,
      );
    } finally {
      await asSuperuser(t.db, [[`UPDATE "AuditCheckpoint" SET "RootHash" = $1 WHERE "TreeSize" = $2`, [victim.RootHash, victim.TreeSize]]]);
    }
    expect((await verify()).code).toBe(0);
  });

  it('with --known, catches the history cut back to an earlier checkpoint', async () => {
    const known = join(dir, 'checkpoints.txt');
    const saved = await verify('--known', known);
    expect(saved.code).toBe(0);
    const size = await treeSize();
    expect(parseCheckpoint(readFileSync(known, 'utf8'), verifierKey).treeSize).toBe(size);

    // Cut back to the checkpoint before bob, carol and dave: their leaves, nodes, checkpoints and rows go.
    const cut = await batchStart();
    const gone = await t.db.query<{ TableName: string; RowId: string }>(`SELECT "TableName", "RowId"::text AS "RowId" FROM "AuditLeaf" WHERE "LeafIndex" >= $1`, [cut]);
    await asSuperuser(t.db, [
      [`DELETE FROM "AuditCheckpoint" WHERE "TreeSize" > $1`, [cut]],
      [`DELETE FROM "AuditLeaf" WHERE "LeafIndex" >= $1`, [cut]],
      [`DELETE FROM "AuditTreeNode" WHERE ("Index" + 1) * (1::bigint << "Level"::int) > $1`, [cut]],
      [`DELETE FROM "UserLogin" WHERE "Id" = ANY($1::bigint[])`, [gone.filter((g) => g.TableName === 'UserLogin').map((g) => g.RowId)]],
      [`DELETE FROM "UserLogout" WHERE "Id" = ANY($1::bigint[])`, [gone.filter((g) => g.TableName === 'UserLogout').map((g) => g.RowId)]],
    ]);
    // Without --known, the shorter log is consistent with itself: only a saved note can tell.
    expect((await verify()).code).toBe(0);
    const run = await verify('--known', known);
    expect(run.code).toBe(1);
    expect(run.last).toBe(`FAILED: history rolled back: ${known} holds checkpoint ${size}, signed earlier, but the latest checkpoint now has ${cut} leaves`);

    // New rows sealed past the old size: the log is as long as before, but not the one signed then.
    await insertLogins(['mallory', 'mallory', 'mallory', 'mallory', 'mallory', 'mallory']);
    await sealAll();
    expect(await treeSize()).toBeGreaterThanOrEqual(size);
    const rewritten = await verify('--known', known);
    expect(rewritten.code).toBe(1);
    expect(rewritten.last).toMatch(new RegExp(`^FAILED: history rewritten: checkpoint ${size} saved in ${known} has root \\S+, today's log has \\S+ at that size$`));
  });
});

/** The embedded default (PGlite, no ConnectionString, a generated signing key), as a newcomer runs it. */
describe('npm run audit:verify against the embedded default', () => {
  it('verifies the sign-ins of a fresh install', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-embedded-verify-'));
    const app = await createApp(resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error' })), { logger: ['error'] });
    try {
      await app.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      const { browser } = await signInAdministrator({ url });
      for (let i = 0; i < 3; i++) await new Browser(url).post('/api/Authentication/ByUserNamePassword', { userName: 'Administrator', password: 'wrong' });
      const me = (await browser.get('/api/Authentication/Session')).json as { userRegistryId: number };
      const key = await browser.post(`/api/UserRegistry/${me.userRegistryId}/ApiKey`, { name: 'auditor' });
      expect(key.status).toBe(201);
      const verifierKey = (await browser.get('/api/Audit/PublicKey')).json.verifierKey as string;
      const rows = (await browser.get('/api/UserLogin')).json.total as number;
      await eventually(async () => (await browser.get('/api/Audit/Checkpoint')).json.treeSize >= rows, 60_000);
      const size = (await browser.get('/api/Audit/Checkpoint')).json.treeSize as number;

      const run = await runCommand(process.execPath, [VERIFIER, '--url', url, '--api-key', key.json.apiKey, '--verifier-key', verifierKey]);
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      expect(run.last).toMatch(new RegExp(`^verified ${size} leaves, \\d+ checkpoints, 0 removed by retention$`));
    } finally {
      await app.close();
      rmSync(dataDirectory, { recursive: true, force: true });
    }
  }, 180_000);
});
