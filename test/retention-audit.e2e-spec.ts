import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AUDIT_SEAL_JOB } from '../src/audit-log/audit-seal.scheduler';
import { AuditRetentionRunWriter } from '../src/retention/audit-retention-run.writer';
import { AuditRetentionRecorder, PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { addPeriods, PARTITIONED_AUDIT_TABLES, partitionName, periodStart } from '../src/retention/partition-plan';
import { createKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const DAY = 86_400_000;
const LOGIN = PARTITIONED_AUDIT_TABLES.find((t) => t.table === 'UserLogin')!;

const ROOT = join(__dirname, '..');

/** `npm run audit:verify` as a user runs it: a child process over HTTP only (it builds dist/ first). */
function verify(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'audit:verify', '--', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

async function sealedAll(t: TestApp): Promise<void> {
  await eventually(async () => {
    await t.app.get(AuditSealer).sealPending();
    const [{ waiting }] = await t.db.query<{ waiting: string }>(`SELECT count(*) AS waiting FROM "AuditPending"`);
    return Number(waiting) === 0;
  }, 60_000);
}

/** Where each planted UserLogin row is stored, by its CreatedUser. */
async function whereIs(t: TestApp): Promise<Map<string, string>> {
  const rows = await t.db.query<{ user: string; partition: string }>(
    `SELECT "CreatedUser" AS user, tableoid::regclass::text AS partition FROM "UserLogin" WHERE "CreatedUser" LIKE 'planted-%'`,
  );
  return new Map(rows.map((r) => [r.user, r.partition.replace(/"/g, '')]));
}

describe('retention without deletes: audit trails partitioned by month, every drop sealed first (contract 16)', () => {
  let t: TestApp;
  let maintenance: PartitionMaintenance;
  let token: string;
  let verifierArgs: string[];
  const start = Date.UTC(2026, 10, 25, 12, 0, 0);
  const dated = new Map<string, Date>([
    ['planted-3y', new Date(start - 3 * 365 * DAY)],
    ['planted-13m', new Date(start - 400 * DAY)],
    ['planted-2m', new Date(start - 60 * DAY)],
    ['planted-now', new Date(start)],
    ['planted-next', new Date(start + 20 * DAY)],
  ]);
  const ids = new Map<string, string>();

  beforeAll(async () => {
    t = await startTestApp({ env: { AuditRetention: 'd/365' } });
    t.clock.set(start);
    maintenance = t.app.get(PartitionMaintenance);
    await maintenance.applyRetention();
    let admin;
    ({ token, browser: admin } = await signInAdministrator(t));
    const auditor = await insertUser(t, { name: 'auditor', password: 'Audit0r-Password!Strong', landlord: true, permissions: [Permission.ReadWriteSecurityUser] });
    const apiKey = (await createKey(t, admin, auditor.id)).apiKey as string;
    const verifierKey = (await admin.get('/api/Audit/PublicKey')).json.verifierKey as string;
    verifierArgs = ['--url', t.url, '--api-key', apiKey, '--verifier-key', verifierKey];
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('partitions UserLogin and UserLogout by month, with their triggers on the parent and TRUNCATE refused on every partition', async () => {
    for (const table of PARTITIONED_AUDIT_TABLES) {
      const names = (
        await t.db.query<{ name: string }>(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`, [
          `"${table.table}"`,
        ])
      ).map((r) => r.name);
      expect(names).toContain(`${table.table}_default`);
      for (let i = 0; i <= 2; i++) expect(names).toContain(partitionName(table, addPeriods('month', periodStart('month', new Date(start)), i)));
      const triggers = (await t.db.query<{ name: string }>(`SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, [`"${table.table}"`])).map(
        (r) => r.name,
      );
      expect(triggers).toEqual(expect.arrayContaining([`${table.table}_AppendOnly`, `${table.table}_AppendOnlyTruncate`, `${table.table}_AuditEnqueue`, `${table.table}_SearchText`]));
      for (const name of names) await expect(t.db.query(`TRUNCATE "${name}"`)).rejects.toThrow(/append-only/);
    }
    // The administrator's sign-in row is there (dated by the test's clock, in start's month, whatever today is): a DELETE
    // reaching it is refused, through the parent or its partition.
    await expect(t.db.query(`DELETE FROM "UserLogin"`)).rejects.toThrow(/append-only/);
    await expect(t.db.query(`DELETE FROM "${partitionName(LOGIN, periodStart('month', new Date(start)))}"`)).rejects.toThrow(/append-only/);
  });

  it('stores sign-in rows dated from years ago to next month, and moves those of DEFAULT to their months without sealing them twice', async () => {
    for (const [user, date] of dated) {
      const [row] = await t.db.query<{ Id: string }>(`INSERT INTO "UserLogin" ("CreatedUser", "RemoteIp", "CreatedDate") VALUES ($1, '203.0.113.9', $2) RETURNING "Id"`, [user, date]);
      ids.set(user, row.Id);
    }
    expect((await whereIs(t)).get('planted-3y')).toBe('UserLogin_default');
    await sealedAll(t);
    const [{ leaves }] = await t.db.query<{ leaves: string }>(`SELECT count(*) AS leaves FROM "AuditLeaf"`);

    await maintenance.ensurePartitions();
    const where = await whereIs(t);
    for (const [user, date] of dated) expect(where.get(user)).toBe(partitionName(LOGIN, periodStart('month', date)));
    // Same rows, same Ids; nothing new waits to be sealed and no second leaf appears.
    for (const [user, id] of ids) {
      const [row] = await t.db.query<{ Id: string }>(`SELECT "Id" FROM "UserLogin" WHERE "CreatedUser" = $1`, [user]);
      expect(row.Id).toBe(id);
    }
    const [{ waiting }] = await t.db.query<{ waiting: string }>(`SELECT count(*) AS waiting FROM "AuditPending"`);
    expect(Number(waiting)).toBe(0);
    await t.app.get(AuditSealer).sealPending();
    const [{ after }] = await t.db.query<{ after: string }>(`SELECT count(*) AS after FROM "AuditLeaf"`);
    expect(after).toBe(leaves);
  });

  it('drops exactly the months wholly older than AuditRetention, each after its AuditRetentionRun is sealed; the leaves stay', async () => {
    const report = await maintenance.applyRetention();
    const gone = [partitionName(LOGIN, periodStart('month', dated.get('planted-3y')!)), partitionName(LOGIN, periodStart('month', dated.get('planted-13m')!))];
    expect(report.dropped).toEqual(gone);
    expect([...(await whereIs(t)).keys()].sort()).toEqual(['planted-2m', 'planted-next', 'planted-now']);

    const runs = await t.db.query<{ Id: string; TableName: string; PartitionName: string; Cutoff: Date; RowCount: string; RunDate: Date }>(
      `SELECT * FROM "AuditRetentionRun" ORDER BY "Id"`,
    );
    expect(runs.map((r) => [r.TableName, r.PartitionName, r.Cutoff.toISOString(), Number(r.RowCount)])).toEqual([
      ['UserLogin', gone[0], addPeriods('month', periodStart('month', dated.get('planted-3y')!), 1).toISOString(), 1],
      ['UserLogin', gone[1], addPeriods('month', periodStart('month', dated.get('planted-13m')!), 1).toISOString(), 1],
    ]);
    for (const run of runs) expect(run.RunDate.getTime()).toBe(start);
    // Each run is a leaf, sealed after the leaves of the rows it removed; those leaves are still there.
    for (const [i, user] of ['planted-3y', 'planted-13m'].entries()) {
      const [rowLeaf] = await t.db.query<{ LeafIndex: string }>(`SELECT "LeafIndex" FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [ids.get(user)]);
      const [runLeaf] = await t.db.query<{ LeafIndex: string }>(`SELECT "LeafIndex" FROM "AuditLeaf" WHERE "TableName" = 'AuditRetentionRun' AND "RowId" = $1`, [runs[i].Id]);
      expect(rowLeaf).toBeDefined();
      expect(Number(runLeaf.LeafIndex)).toBeGreaterThan(Number(rowLeaf.LeafIndex));
    }
    const [{ deleted }] = await t.db.query<{ deleted: string }>(`SELECT coalesce(sum(n_tup_del), 0) AS deleted FROM pg_stat_user_tables WHERE relname LIKE 'UserLog%'`);
    expect(Number(deleted)).toBe(0);

    // Through HTTP: the runs, and the dropped rows' leaves with no canonical form any more.
    const res = await fetch(`${t.url}/api/Audit/RetentionRuns`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { partitionName: string }[]).map((r) => r.partitionName)).toEqual(gone);
    const proof = await fetch(`${t.url}/api/Audit/Proof?table=UserLogin&id=${ids.get('planted-3y')}`, { headers: { authorization: `Bearer ${token}` } });
    expect(proof.status).toBe(200);
    expect(((await proof.json()) as { canonical: unknown }).canonical).toBeNull();
  });

  it('verifies with npm run audit:verify, counting the dropped rows as removed by retention, and still names a row deleted any other way', async () => {
    await sealedAll(t);
    const good = await verify([...verifierArgs, '--retention', 'd/365']);
    expect(good.code).toBe(0);
    expect(good.stdout.trim().split('\n').at(-1)).toMatch(/^verified \d+ leaves, \d+ checkpoints, 2 removed by retention$/);

    // A row removed behind retention's back (the superuser, triggers off): tampering, named.
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(`DELETE FROM "UserLogin" WHERE "Id" = $1`, [ids.get('planted-2m')]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    const bad = await verify(verifierArgs);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`UserLogin`);
    expect(bad.stdout).toContain(ids.get('planted-2m')!);
  }, 300_000);

  it('keeps a partition while its AuditRetentionRun is not sealed, and drops it once it is (the run written once)', async () => {
    // The sealer stopped: nothing becomes a leaf until this test seals by hand.
    t.app.get(SchedulerRegistry).deleteInterval(AUDIT_SEAL_JOB);
    (t.app.get(AuditRetentionRecorder) as AuditRetentionRunWriter).sealWaitMs = 1_500;
    const twoYears = new Date(start - 2 * 365 * DAY);
    const partition = partitionName(LOGIN, periodStart('month', twoYears));
    await t.db.query(`INSERT INTO "UserLogin" ("CreatedUser", "CreatedDate") VALUES ('planted-2y', $1)`, [twoYears]);

    const held = await maintenance.applyRetention();
    expect(held.created).toContain(partition);
    expect(held.dropped).toEqual([]);
    expect((await whereIs(t)).get('planted-2y')).toBe(partition);
    const [run] = await t.db.query<{ Id: string }>(`SELECT "Id" FROM "AuditRetentionRun" WHERE "PartitionName" = $1`, [partition]);
    expect(await t.db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'AuditRetentionRun' AND "RowId" = $1`, [run.Id])).toHaveLength(0);

    await sealedAll(t);
    const dropped = await maintenance.applyRetention();
    expect(dropped.dropped).toEqual([partition]);
    expect((await whereIs(t)).has('planted-2y')).toBe(false);
    expect(await t.db.query(`SELECT "Id" FROM "AuditRetentionRun" WHERE "PartitionName" = $1`, [partition])).toEqual([{ Id: run.Id }]);
  }, 120_000);
});
