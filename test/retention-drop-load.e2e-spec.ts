import { PartitionMaintenance } from '../src/retention/partition-maintenance.service';
import { PARTITIONED_AUDIT_TABLES, partitionName, periodStart } from '../src/retention/partition-plan';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { insertUser, signInAdministrator } from './helpers/users';
import { Permission } from '../src/access/permissions';

const ROWS = 1_000_000;
const WORKERS = 3;
const PASSWORD = 'Dr1ll-Password-Strong!';
const LOGIN = PARTITIONED_AUDIT_TABLES.find((t) => t.table === 'UserLogin')!;

/**
 * The drill of issue 20: a UserLogin partition holding 1M rows is dropped by retention while sign-ins,
 * logouts, grid reads and the readiness probe keep coming, concurrently. Every one of them answers as it
 * would at rest (200), and the rows leave by the drop alone.
 */
describe('sign-in, logout and reads keep answering while a 1M-row partition is dropped (contract 16)', () => {
  let t: TestApp;
  const start = Date.UTC(2026, 10, 25, 12, 0, 0);
  const old = new Date(start - 2 * 365 * 86_400_000);
  const partition = partitionName(LOGIN, periodStart('month', old));

  beforeAll(async () => {
    t = await startTestApp({ env: { AuditRetention: 'd/365' } });
    t.clock.set(start);
    await signInAdministrator(t);
    // One user per worker: a logout ends every session of its user (service.md 3.2), so workers sharing
    // one user would revoke each other's fresh tokens, a race of the drill and not of the drop.
    for (let w = 0; w < WORKERS; w++) await insertUser(t, { name: `drill-${w}`, password: PASSWORD, landlord: true, permissions: [Permission.ReadWriteSecurityUser] });
    // The old month's partition, made by the job from one row dated then; then 1M rows written into it
    // in one statement, as the superuser with triggers off (a fixture: these rows are not sealed, and
    // the sealer need not work through a million of them before the drill).
    await t.db.query(`INSERT INTO "UserLogin" ("CreatedUser", "CreatedDate") VALUES ('old', $1)`, [old]);
    await t.app.get(PartitionMaintenance).ensurePartitions();
    const client = await t.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SET LOCAL session_replication_role = replica');
      await client.query(
        `INSERT INTO "${partition}" ("Id", "CreatedDate", "CreatedUser", "RemoteIp", "UserAgent")
         SELECT 1000000000 + i, $1::timestamptz + (i % 86400) * interval '1 second', 'bulk' || (i % 1000), '203.0.113.9', 'bulk/1.0' FROM generate_series(1, $2::int) i`,
        [periodStart('month', old), ROWS],
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  }, 300_000);
  afterAll(async () => {
    await t?.close();
  });

  it('answers every sign-in, logout, grid read and readiness probe with 200 while the partition goes', async () => {
    const [{ before }] = await t.db.query<{ before: string }>(`SELECT count(*) AS before FROM "${partition}"`);
    expect(Number(before)).toBe(ROWS + 1);

    const statuses: Record<string, number[]> = { signIn: [], logout: [], grid: [], ready: [] };
    let dropping = true;
    const worker = async (w: number) => {
      for (let i = 0; dropping || i < 3; i++) {
        const browser = new Browser(t.url);
        const signIn = await browser.post('/api/Authentication/ByUserNamePassword', { userName: `drill-${w}`, password: PASSWORD });
        statuses.signIn.push(signIn.status);
        const grid = await browser.get('/api/UserLogin?take=50', { authorization: `Bearer ${signIn.json?.token}` });
        statuses.grid.push(grid.status);
        statuses.ready.push((await fetch(`${t.url}/health/ready`)).status);
        statuses.logout.push((await browser.post('/api/Authentication/Logout')).status);
      }
    };
    const workers = Array.from({ length: WORKERS }, (_, w) => worker(w));
    const report = await t.app.get(PartitionMaintenance).applyRetention();
    dropping = false;
    await Promise.all(workers);

    expect(report.dropped).toContain(partition);
    const [{ exists }] = await t.db.query<{ exists: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS exists`, [`"${partition}"`]);
    expect(exists).toBe(false);
    for (const [kind, list] of Object.entries(statuses)) {
      expect(list.length).toBeGreaterThanOrEqual(9);
      expect({ kind, statuses: [...new Set(list)] }).toEqual({ kind, statuses: [200] });
    }
    const [run] = await t.db.query<{ RowCount: string }>(`SELECT "RowCount" FROM "AuditRetentionRun" WHERE "PartitionName" = $1`, [partition]);
    expect(Number(run.RowCount)).toBe(ROWS + 1);
    const [{ deleted }] = await t.db.query<{ deleted: string }>(`SELECT coalesce(sum(n_tup_del), 0) AS deleted FROM pg_stat_user_tables WHERE relname LIKE 'UserLogin%'`);
    expect(Number(deleted)).toBe(0);
  }, 300_000);
});
