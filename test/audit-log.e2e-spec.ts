import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { AuditLeafRepository } from '../src/audit-log/audit-leaf.repository';
import { AuditedRowsRepository } from '../src/audit-log/audited-rows.repository';
import { canonicalRow } from '../src/audit-log/canonical';
import { rootOf, verifyConsistency, verifyInclusion } from '../src/audit-log/merkle';
import { parseCheckpoint } from '../src/audit-log/note';
import { spoolPath } from '../src/common/json-lines-spool';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { holdingSealLock as holdingSealLockOn, sealAllPending } from './helpers/sealing';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { insertUser, signInAdministrator } from './helpers/users';
import { LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';
import { Permission } from '../src/access/permissions';
import { fromBase64 } from './helpers/audit-reference';
import { asSuperuser } from './helpers/audit-log';

const STRONG = 'Tenant-Adm1n-Password!';
const sha256 = (...parts: Buffer[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

/** The same Ed25519 key for every node of the file, as a cluster would be configured. */
const SIGNING_KEY = (generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string).replace(/\n/g, '\\n');

/**
 * The tamper-evident audit log (contract 15, issue 19) through HTTP against PostgreSQL: append-only
 * triggers, the first checkpoint, every row sealed exactly once (direct inserts, a late commit of a
 * low Id, a spool replay, two nodes sealing one burst), proofs checked with the RFC 6962 verifiers
 * against the signed root, the canonical bytes recomputed here by hand.
 */
describe('tamper-evident audit log (contract 15)', () => {
  let t: TestApp;
  let logs: CapturedLogs;
  let landlord: Browser;
  let verifier: string;

  const sealer = (app: TestApp = t) => app.app.get(AuditSealer);
  /** Seals until nothing waits (what the one-second job does), so a test need not wait for it. */
  const sealAll = (app: TestApp = t) => sealAllPending(app.app);
  const latest = async () => (await landlord.get('/api/Audit/Checkpoint')).json as { treeSize: number; rootHash: string; note: string };
  const insertLogin = (user: string) =>
    t.db.query<{ Id: string }>(
      `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "RemoteIp") VALUES ($1, 1, false, '198.51.100.7') RETURNING "Id"::text AS "Id"`,
      [user],
    );

  /** Every leaf of the log, in order, through the route (pages of at most 10000). */
  async function allLeaves(browser = landlord): Promise<any[]> {
    const size = (await browser.get('/api/Audit/Checkpoint')).json.treeSize as number;
    const leaves: any[] = [];
    for (let start = 0; start < size; start += 10_000) leaves.push(...(await browser.get(`/api/Audit/Leaves?start=${start}&end=${Math.min(size, start + 10_000)}`)).json);
    return leaves;
  }

  /** The log holds every row of the sealed tables (AdminChange too since contract 18) exactly once, at indexes 0..n-1. */
  async function expectEveryRowOnce(): Promise<void> {
    const leaves = await t.db.query<{ LeafIndex: string; TableName: string; RowId: string }>(
      `SELECT "LeafIndex"::text AS "LeafIndex", "TableName", "RowId"::text AS "RowId" FROM "AuditLeaf" l ORDER BY l."LeafIndex"`,
    );
    expect(leaves.map((l) => Number(l.LeafIndex))).toEqual(leaves.map((_, i) => i));
    const rows = await t.db.query<{ key: string }>(
      `SELECT 'UserLogin:' || "Id" AS key FROM "UserLogin" UNION ALL SELECT 'UserLogout:' || "Id" FROM "UserLogout"
       UNION ALL SELECT 'AuditRetentionRun:' || "Id" FROM "AuditRetentionRun" UNION ALL SELECT 'AdminChange:' || "Id" FROM "AdminChange"`,
    );
    const keys = leaves.map((l) => `${l.TableName}:${l.RowId}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.sort()).toEqual(rows.map((r) => r.key).sort());
  }

  beforeAll(async () => {
    logs = new CapturedLogs();
    t = await startTestApp({ logger: logs, env: { AuditSigningKey: SIGNING_KEY } });
    ({ browser: landlord } = await signInAdministrator(t));
    verifier = (await landlord.get('/api/Audit/PublicKey')).json.verifierKey;
  });
  afterAll(async () => t?.close());

  it('writes the size-0 checkpoint at first start, signed, and logs it at INFO as one line', async () => {
    const res = await landlord.get('/api/Audit/Checkpoint?treeSize=0');
    expect(res.status).toBe(200);
    expect(res.json.treeSize).toBe(0);
    expect(fromBase64(res.json.rootHash)).toEqual(sha256());
    expect(parseCheckpoint(res.json.note, verifier)).toEqual({ origin: expect.any(String), treeSize: 0, rootHash: sha256() });
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "AuditCheckpoint" WHERE "TreeSize" = 0`);
    expect(n).toBe(1);
    const line = logs.lines.find((l) => l.level === 'log' && l.message.startsWith('audit checkpoint 0 '));
    expect(line).toBeDefined();
    expect(line!.message).not.toContain('\n');
    expect(JSON.parse(line!.message.slice('audit checkpoint 0 '.length))).toBe(res.json.note);
  });

  it('serves the public key: origin from the database system identifier, key id, verifier key', async () => {
    const res = await landlord.get('/api/Audit/PublicKey');
    expect(res.status).toBe(200);
    const [{ id }] = await t.db.query<{ id: string }>(`SELECT system_identifier::text AS id FROM pg_control_system()`);
    expect(res.json.origin).toBe(`transaction-monitoring/audit/${id}`);
    const raw = fromBase64(res.json.publicKey);
    expect(raw).toHaveLength(32);
    const keyId = sha256(Buffer.from(res.json.origin), Buffer.from([0x0a, 0x01]), raw).subarray(0, 4);
    expect(res.json.keyId).toBe(keyId.toString('hex'));
    expect(res.json.verifierKey).toBe(`${res.json.origin}+${keyId.toString('hex')}+${Buffer.concat([Buffer.from([1]), raw]).toString('base64')}`);
  });

  it('seals sign-ins and logouts as leaves; a proof verifies against the signed root; checkpoints are consistent', async () => {
    const before = await latest();
    const res = await landlord.post('/api/Authentication/Logout');
    expect(res.status).toBe(200);
    ({ browser: landlord } = await signInAdministrator(t));
    await sealAll();
    const after = await latest();
    expect(after.treeSize).toBeGreaterThan(before.treeSize);
    expect(parseCheckpoint(after.note, verifier)).toEqual({ origin: expect.any(String), treeSize: after.treeSize, rootHash: fromBase64(after.rootHash) });
    const line = logs.lines.find((l) => l.level === 'log' && l.message.startsWith(`audit checkpoint ${after.treeSize} `));
    expect(JSON.parse(line!.message.slice(`audit checkpoint ${after.treeSize} `.length))).toBe(after.note);

    const [logout] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogout" ORDER BY "Id" DESC LIMIT 1`);
    const [login] = await t.db.query<{ Id: string }>(`SELECT "Id"::text AS "Id" FROM "UserLogin" ORDER BY "Id" DESC LIMIT 1`);
    for (const [table, id] of [['UserLogout', logout.Id], ['UserLogin', login.Id]]) {
      const proof = await landlord.get(`/api/Audit/Proof?table=${table}&id=${id}`);
      expect(proof.status).toBe(200);
      expect(proof.json.treeSize).toBe(after.treeSize);
      const record = Buffer.from(proof.json.leafRecord, 'utf8');
      const [name, rowId, , rowHash] = proof.json.leafRecord.split('\n');
      expect([name, rowId]).toEqual([table, id]);
      expect(fromBase64(rowHash)).toEqual(sha256(Buffer.from(proof.json.canonical, 'utf8')));
      expect(fromBase64(proof.json.leafHash)).toEqual(sha256(Buffer.from([0]), record));
      expect(verifyInclusion(proof.json.leafIndex, after.treeSize, fromBase64(proof.json.leafHash), proof.json.auditPath.map(fromBase64), fromBase64(after.rootHash))).toBe(true);
      // The same proof against any other root fails: the check can fail.
      expect(verifyInclusion(proof.json.leafIndex, after.treeSize, fromBase64(proof.json.leafHash), proof.json.auditPath.map(fromBase64), fromBase64(before.rootHash))).toBe(false);
    }

    const consistency = await landlord.get(`/api/Audit/Consistency?first=${before.treeSize}&second=${after.treeSize}`);
    expect(consistency.status).toBe(200);
    expect(verifyConsistency(before.treeSize, after.treeSize, fromBase64(before.rootHash), fromBase64(after.rootHash), consistency.json.proof.map(fromBase64))).toBe(true);
    const checkpoints = (await landlord.get('/api/Audit/Checkpoints?from=0')).json as any[];
    expect(checkpoints.map((c) => c.treeSize)).toEqual([...checkpoints.map((c) => c.treeSize)].sort((a, b) => a - b));
    expect(checkpoints[0].treeSize).toBe(0);
    for (let i = 1; i < checkpoints.length; i++) {
      const proof = (await landlord.get(`/api/Audit/Consistency?first=${checkpoints[i - 1].treeSize}&second=${checkpoints[i].treeSize}`)).json.proof.map(fromBase64);
      expect(verifyConsistency(checkpoints[i - 1].treeSize, checkpoints[i].treeSize, fromBase64(checkpoints[i - 1].rootHash), fromBase64(checkpoints[i].rootHash), proof)).toBe(true);
    }
    await expectEveryRowOnce();
  });

  it('serves a hand-written example leaf exactly: canonical bytes, row hash, leaf record, leaf hash', async () => {
    await t.db.query(
      `INSERT INTO "UserLogin" ("Id", "CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId", "Failed",
                                "FailureTypeId", "FailureMessage", "RemoteIp", "LocalIp", "UserAgent")
       VALUES (900000042, '2026-11-25T19:19:32.123456Z', 'alice "the" ünïcode', 7, 3, 1, false, null, null, '203.0.113.9', '10.0.0.5', 'curl/8.5.0')`,
    );
    await t.db.query(
      `INSERT INTO "UserLogout" ("Id", "CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId", "RemoteIp",
                                 "LocalIp", "UserAgent", "SessionStartDate", "CutByUser", "Message")
       VALUES (900000043, '2026-11-25T19:20:00.000001Z', 'bob', null, 3, 2, 1, null, null, null, '2026-11-25T18:00:00Z', 'Administrator', 'cut')`,
    );
    await sealAll();
    const expected = [
      {
        table: 'UserLogin',
        id: '900000042',
        date: '2026-11-25T19:19:32.123456Z',
        canonical: '["UserLogin","900000042","2026-11-25T19:19:32.123456Z","alice \\"the\\" ünïcode",7,3,1,false,null,null,"203.0.113.9","10.0.0.5","curl/8.5.0"]',
      },
      {
        table: 'UserLogout',
        id: '900000043',
        date: '2026-11-25T19:20:00.000001Z',
        canonical: '["UserLogout","900000043","2026-11-25T19:20:00.000001Z","bob",null,3,2,1,null,null,null,"2026-11-25T18:00:00.000000Z","Administrator","cut"]',
      },
    ];
    for (const example of expected) {
      const rowHash = sha256(Buffer.from(example.canonical, 'utf8'));
      const record = `${example.table}\n${example.id}\n${example.date}\n${rowHash.toString('base64')}\n`;
      const leafHash = sha256(Buffer.from([0]), Buffer.from(record, 'utf8'));
      const proof = await landlord.get(`/api/Audit/Proof?table=${example.table}&id=${example.id}`);
      expect(proof.status).toBe(200);
      expect(proof.json.canonical).toBe(example.canonical);
      expect(proof.json.leafRecord).toBe(record);
      expect(proof.json.leafHash).toBe(leafHash.toString('base64'));
      const [leaf] = (await landlord.get(`/api/Audit/Leaves?start=${proof.json.leafIndex}&end=${proof.json.leafIndex + 1}`)).json;
      expect(leaf).toEqual({
        leafIndex: proof.json.leafIndex,
        table: example.table,
        rowId: example.id,
        rowCreatedDate: example.date,
        rowHash: rowHash.toString('base64'),
        leafHash: leafHash.toString('base64'),
        canonical: example.canonical,
      });
    }
  });

  it('refuses UPDATE, DELETE and TRUNCATE on the five tables, even to the superuser', async () => {
    await t.db.query(
      `INSERT INTO "AuditRetentionRun" ("TableName", "PartitionName", "Cutoff", "RowCount") VALUES ('UserLogin', 'UserLogin_2020_01', '2020-02-01Z', 0)`,
    );
    await sealAll();
    const [{ superuser }] = await t.db.query<{ superuser: boolean }>(`SELECT rolsuper AS superuser FROM pg_roles WHERE rolname = current_user`);
    expect(superuser).toBe(true);
    const tables = { UserLogin: '"CreatedUser"', UserLogout: '"CreatedUser"', AuditLeaf: '"RowId"', AuditCheckpoint: '"Note"', AuditRetentionRun: '"RowCount"' };
    for (const [table, column] of Object.entries(tables)) {
      const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}"`);
      expect(n).toBeGreaterThan(0);
      await expect(t.db.query(`UPDATE "${table}" SET ${column} = ${column}`)).rejects.toThrow(`${table} is append-only: UPDATE refused`);
      await expect(t.db.query(`DELETE FROM "${table}"`)).rejects.toThrow(`${table} is append-only: DELETE refused`);
      await expect(t.db.query(`TRUNCATE "${table}"`)).rejects.toThrow(`${table} is append-only: TRUNCATE refused`);
      const [{ m }] = await t.db.query<{ m: number }>(`SELECT count(*)::int AS m FROM "${table}"`);
      expect(m).toBe(n);
    }
    await expectEveryRowOnce();
  });

  it('seals a row committed after later Ids were sealed, and rows inserted directly, each once', async () => {
    const late = new Client({ connectionString: t.db.url });
    await late.connect();
    try {
      await late.query('BEGIN');
      const [{ Id: lowId }] = (await late.query(`INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId") VALUES ('late', 1) RETURNING "Id"::text AS "Id"`)).rows;
      const [{ Id: highId }] = await insertLogin('direct-after');
      expect(BigInt(highId)).toBeGreaterThan(BigInt(lowId));
      await sealAll();
      expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${highId}`)).status).toBe(200);
      expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${lowId}`)).status).toBe(404);
      await late.query('COMMIT');
      await sealAll();
      const proof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${lowId}`);
      expect(proof.status).toBe(200);
      const checkpoint = await latest();
      expect(verifyInclusion(proof.json.leafIndex, checkpoint.treeSize, fromBase64(proof.json.leafHash), proof.json.auditPath.map(fromBase64), fromBase64(checkpoint.rootHash))).toBe(true);
      // Against the checkpoint sealed before it committed, it is not there.
      const earlier = (await landlord.get('/api/Audit/Checkpoints?from=0')).json.filter((c: any) => c.treeSize <= proof.json.leafIndex).pop();
      expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${lowId}&treeSize=${earlier.treeSize}`)).status).toBe(404);
    } finally {
      await late.end();
    }
    await expectEveryRowOnce();
  });

  it('two nodes seal one burst concurrently: leaves 0..n-1, no gap, no duplicate; a spool replay is sealed once', async () => {
    // Node B starts with UserLogout rows an earlier run of it kept on disk during an outage.
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-test-audit-'));
    const spool = spoolPath(dataDirectory, 'audit-node-b', 'UserLogout');
    mkdirSync(join(dataDirectory, 'spool'), { recursive: true, mode: 0o700 });
    const kept = [0, 1, 2].map((i) =>
      JSON.stringify({
        createdDate: new Date(Date.now() - 3_600_000 + i).toISOString(),
        createdUser: `spooled-${i}`,
        userRegistryId: null,
        tenantRegistryId: null,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.Revoked,
        context: { remoteIp: '192.0.2.1', localIp: null, userAgent: 'spool' },
        sessionStartDate: null,
        cutByUser: null,
        message: null,
      }),
    );
    writeFileSync(spool, kept.join('\n') + '\n', { mode: 0o600 });
    const b = await startTestApp({ db: t.db, env: { AuditSigningKey: SIGNING_KEY, DataDirectory: dataDirectory, Instance: 'audit-node-b' } });
    try {
      await eventually(async () => (await t.db.query(`SELECT 1 FROM "UserLogout" WHERE "CreatedUser" LIKE 'spooled-%'`)).length === 3);
      // Its start wrote no second size-0 checkpoint.
      expect(await t.db.query(`SELECT "TreeSize" FROM "AuditCheckpoint" WHERE "TreeSize" = 0`)).toHaveLength(1);
      // A burst from eight connections while both nodes seal in a loop.
      let inserting = true;
      const burst = Promise.all(
        Array.from({ length: 8 }, async (_, c) => {
          for (let i = 0; i < 40; i++) {
            await t.db.query(
              `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId") SELECT 'burst-' || $1 || '-' || g, 1 FROM generate_series(1, 25) g`,
              [`${c}-${i}`],
            );
          }
        }),
      ).finally(() => (inserting = false));
      const sealing = async (app: TestApp) => {
        while (inserting) await app.app.get(AuditSealer).sealBatch();
      };
      await Promise.all([burst, sealing(t), sealing(b)]);
      await sealAll(t);
      await sealAll(b);
    } finally {
      await b.close();
    }
    const [{ n }] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "UserLogin" WHERE "CreatedUser" LIKE 'burst-%'`);
    expect(n).toBe(8 * 40 * 25);
    await expectEveryRowOnce();
    // Every checkpoint written by either node verifies and extends the one before it.
    const checkpoints = (await landlord.get('/api/Audit/Checkpoints?from=0')).json as any[];
    for (const c of checkpoints) expect(parseCheckpoint(c.note, verifier).treeSize).toBe(c.treeSize);
    const last = checkpoints[checkpoints.length - 1];
    const leaves = await allLeaves();
    expect(leaves).toHaveLength(last.treeSize);
    expect(rootOf(leaves.map((l) => fromBase64(l.leafHash)))).toEqual(fromBase64(last.rootHash));
    const spooled = leaves.filter((l) => l.canonical?.includes('"spooled-'));
    expect(spooled).toHaveLength(3);
  });

  it('answers 400 naming a bad parameter, 404 for what is not there', async () => {
    const size = (await latest()).treeSize;
    const bad: Array<[string, string]> = [
      ['/api/Audit/Checkpoint?treeSize=abc', 'treeSize'],
      ['/api/Audit/Checkpoint?treeSize=-1', 'treeSize'],
      ['/api/Audit/Checkpoint?treeSize=1.5', 'treeSize'],
      ['/api/Audit/Checkpoints?from=x', 'from'],
      ['/api/Audit/Proof?table=UserSession&id=1', 'table'],
      ['/api/Audit/Proof?id=1', 'table'],
      ['/api/Audit/Proof?table=UserLogin&id=-4', 'id'],
      ['/api/Audit/Proof?table=UserLogin&id=99999999999999999999', 'id'],
      ['/api/Audit/Proof?table=UserLogin&id=1&treeSize=x', 'treeSize'],
      [`/api/Audit/Consistency?first=${size}&second=0`, 'first'],
      ['/api/Audit/Consistency?first=0', 'second'],
      ['/api/Audit/Leaves?start=5&end=4', 'end'],
      ['/api/Audit/Leaves?start=0&end=10001', 'end'],
      ['/api/Audit/Leaves?start=a&end=4', 'start'],
    ];
    for (const [path, field] of bad) {
      const res = await landlord.get(path);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({ path, status: 400, type: expect.stringContaining('application/problem+json') });
      expect(res.json.detail).toMatch(new RegExp(`^${field}:`));
    }
    expect((await landlord.get('/api/Audit/Leaves?start=0&end=10000')).status).toBe(200);
    expect((await landlord.get(`/api/Audit/Checkpoint?treeSize=${size + 1000}`)).status).toBe(404);
    expect((await landlord.get(`/api/Audit/Consistency?first=0&second=${size + 1000}`)).status).toBe(404);
    expect((await landlord.get('/api/Audit/Proof?table=UserLogin&id=123456789012')).status).toBe(404);
    expect((await landlord.get('/api/Audit/Proof?table=AuditRetentionRun&id=1')).status).toBe(200);
    const runs = await landlord.get('/api/Audit/RetentionRuns');
    expect(runs.json).toEqual([
      { id: '1', runDate: expect.stringMatching(/\.\d{6}Z$/), tableName: 'UserLogin', partitionName: 'UserLogin_2020_01', cutoff: '2020-02-01T00:00:00.000000Z', rowCount: '0' },
    ]);
  });

  it('is for landlord administrators only: a tenant administrator gets 403, an anonymous caller 401', async () => {
    await insertUser(t, { name: 'tenant-admin', password: STRONG, tenantName: 'Tenant A', permissions: [Permission.ReadWriteSecurityRole, Permission.ReadWriteSecurityUser] });
    const tenantAdmin = new Browser(t.url);
    expect((await tenantAdmin.post('/api/Authentication/ByUserNamePassword', { userName: 'tenant-admin', password: STRONG })).status).toBe(200);
    for (const path of ['PublicKey', 'Checkpoint', 'Checkpoints', 'Proof?table=UserLogin&id=1', 'Consistency?first=0&second=0', 'Leaves?start=0&end=1', 'RetentionRuns', 'Status']) {
      expect((await tenantAdmin.get(`/api/Audit/${path}`)).status).toBe(403);
      expect((await new Browser(t.url).get(`/api/Audit/${path}`)).status).toBe(401);
      expect((await landlord.get(`/api/Audit/${path}`)).status).toBe(200);
    }
  });

  it('answers 503 with Retry-After, not 500, when a read of the log passes the database deadline', async () => {
    const blocker = new Client({ connectionString: t.db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE "AuditLeaf" IN ACCESS EXCLUSIVE MODE');
      const res = await landlord.get('/api/Audit/Leaves?start=0&end=1');
      expect({ status: res.status, retryAfter: res.headers.get('retry-after'), type: res.headers.get('content-type') }).toEqual({
        status: 503,
        retryAfter: '5',
        type: expect.stringContaining('application/problem+json'),
      });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect((await landlord.get('/api/Audit/Leaves?start=0&end=1')).status).toBe(200);
    await sealAll();
    await expectEveryRowOnce();
  });

  it('reports what waits to be sealed and for how long', async () => {
    await sealAll();
    let status = (await landlord.get('/api/Audit/Status')).json;
    expect(status).toMatchObject({ pendingRows: 0, oldestPendingSeconds: null, sealIntervalMilliseconds: 1000, verifierKey: verifier });
    expect(status.latest.treeSize).toBe((await latest()).treeSize);
    expect(status.lastRetentionRun).toMatchObject({ tableName: 'UserLogin', partitionName: 'UserLogin_2020_01' });
    // Held back: an entry enqueued a minute ago (as if the sealer had been down).
    const client = new Client({ connectionString: t.db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SET LOCAL timezone = 'UTC'`);
      await client.query(`SELECT pg_advisory_xact_lock(7206310519)`);
      await insertLogin('waiting');
      status = (await landlord.get('/api/Audit/Status')).json;
      expect(status.pendingRows).toBe(1);
      expect(status.oldestPendingSeconds).toBeGreaterThanOrEqual(0);
      // While another holder keeps the seal lock, this node seals nothing and says so.
      expect(await sealer().sealBatch()).toMatchObject({ locked: false, sealed: 0 });
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
    await sealAll();
    expect((await landlord.get('/api/Audit/Status')).json.pendingRows).toBe(0);
  });

  it('a row no canonical form can hold (a negative Id written by hand) is reported and left out, never blocking the rows after it', async () => {
    await t.db.query(`INSERT INTO "UserLogin" ("Id", "CreatedUser", "AuthenticationTypeId") VALUES (-7, 'odd', 1)`);
    const [{ Id: after }] = await insertLogin('after-odd');
    await sealAll();
    expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${after}`)).status).toBe(200);
    expect(await t.db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = -7`)).toHaveLength(0);
    expect(logs.count('error', /^1 audit rows cannot be put in canonical form and are not in the log: UserLogin:-7 /)).toBe(1);
  });

  it('Ids at both ends of bigint in one batch (written by hand) are sealed and refused as any others, the batch after them too', async () => {
    const [lowest, highest] = ['-9223372036854775808', '9223372036854775807'];
    await holdingSealLock(async () => {
      await t.db.query(`INSERT INTO "UserLogin" ("Id", "CreatedUser", "AuthenticationTypeId") VALUES ($1, 'lowest', 1), ($2, 'highest', 1)`, [lowest, highest]);
    });
    await sealAll();
    expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${highest}`)).status).toBe(200);
    expect(await t.db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [lowest])).toHaveLength(0);
    expect(logs.count('error', new RegExp(`^1 audit rows cannot be put in canonical form and are not in the log: UserLogin:${lowest} `))).toBe(1);
    const [{ Id: after }] = await insertLogin('after-extremes');
    await sealAll();
    expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${after}`)).status).toBe(200);
  });

  it('a row waiting to be sealed a second time (enqueued again after its leaf) is sealed once, with the rows beside it, and said', async () => {
    const [{ Id: first }] = await insertLogin('sealed-once');
    await sealAll();
    // What a second trigger (a partition attached with its own copy) would write: an entry for a sealed row.
    await t.db.query(`INSERT INTO "AuditPending" ("TableName", "RowId") VALUES ('UserLogin', $1)`, [first]);
    const [{ Id: before }] = await insertLogin('beside-before');
    const [{ Id: after }] = await insertLogin('beside-after');
    const size = (await latest()).treeSize;
    await sealAll();
    expect((await latest()).treeSize).toBe(size + 2);
    for (const id of [before, after]) expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${id}`)).status).toBe(200);
    expect(await t.db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [first])).toHaveLength(1);
    const [{ n, max }] = await t.db.query<{ n: number; max: number }>(`SELECT count(*)::int AS n, max("LeafIndex")::int AS max FROM "AuditLeaf"`);
    expect(max).toBe(n - 1);
    expect(logs.count('warn', new RegExp(`^1 audit rows were waiting to be sealed a second time and were sealed once: UserLogin:${first}$`))).toBe(1);
  });

  /** Runs `work` while this test holds the seal lock, so the one-second job seals none of its rows meanwhile. */
  const holdingSealLock = (work: () => Promise<void>) => holdingSealLockOn(t.db.url, work);

  /** Clears the trigger's hashes of these UserLogin rows' entries: what an entry enqueued before migration PendingHashes looks like. */
  const unhash = async (ids: string[]) => {
    const cleared = await t.db.query(`UPDATE "AuditPending" SET "RowHash" = NULL, "LeafHash" = NULL WHERE "TableName" = 'UserLogin' AND "RowId" = ANY($1::bigint[]) RETURNING 1`, [ids]);
    expect(cleared).toHaveLength(ids.length);
  };

  it('ordinary rows are sealed by the fast statement alone; of an Id naming two rows (two months, by hand) it seals the first from its hashes and the second is outside the log; an entry without hashes gives way to the careful statement, which seals one and names it', async () => {
    const leaves = t.app.get(AuditLeafRepository);
    const fast = jest.spyOn(leaves, 'appendFromPendingFast');
    const careful = jest.spyOn(leaves, 'appendFromPending');
    // One statement, so one pending entry (the second row's trigger finds it: ON CONFLICT DO NOTHING) for two rows.
    const insertDoubled = (id: string, name: string) =>
      t.db.query(
        `INSERT INTO "UserLogin" ("Id", "CreatedUser", "AuthenticationTypeId", "CreatedDate") VALUES ($1, $2 || '-a', 1, now()), ($1, $2 || '-b', 1, now() - interval '40 days')`,
        [id, name],
      );
    try {
      await sealAll();
      const [{ Id: plain }] = await insertLogin('plain');
      await sealAll();
      expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${plain}`)).status).toBe(200);
      expect(fast).toHaveBeenCalled();
      expect(careful).not.toHaveBeenCalled();

      // The fast statement reads no row: it seals the entry's hashes, those of the row that wrote it.
      const id = '900000001';
      let size = (await latest()).treeSize;
      await holdingSealLock(async () => {
        await insertDoubled(id, 'doubled');
      });
      await sealAll();
      expect(careful).not.toHaveBeenCalled();
      expect((await latest()).treeSize).toBe(size + 1);
      const proof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${id}`);
      expect(proof.status).toBe(200);
      expect(proof.json.canonical).toContain('"doubled-a"');
      const outside = (await landlord.get('/api/Audit/Outside')).json as { rows: { table: string; rowId: string; canonical: string; reason: string }[] };
      expect(outside.rows).toEqual(expect.arrayContaining([expect.objectContaining({ table: 'UserLogin', rowId: id, reason: 'not-in-log', canonical: expect.stringContaining('"doubled-b"') })]));

      // An entry without hashes (as one enqueued before migration PendingHashes): the fast statement reads
      // its rows, finds two under one Id and gives way; the careful one seals one and names it.
      const other = '900000002';
      let before = '';
      let after = '';
      size = (await latest()).treeSize;
      await holdingSealLock(async () => {
        [{ Id: before }] = await insertLogin('doubled-before');
        await insertDoubled(other, 'unhashed');
        await unhash([other]);
        [{ Id: after }] = await insertLogin('doubled-after');
      });
      await sealAll();
      expect(careful).toHaveBeenCalled();
      expect((await latest()).treeSize).toBe(size + 3);
      for (const rowId of [before, other, after]) expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${rowId}`)).status).toBe(200);
      expect(await t.db.query(`SELECT 1 FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [other])).toHaveLength(1);
      const [{ n, max }] = await t.db.query<{ n: number; max: number }>(`SELECT count(*)::int AS n, max("LeafIndex")::int AS max FROM "AuditLeaf"`);
      expect(max).toBe(n - 1);
      expect(logs.count('error', new RegExp(`^1 audit rows share their Id with another row of their table: only one of each can be sealed: UserLogin:${other}$`))).toBe(1);
    } finally {
      fast.mockRestore();
      careful.mockRestore();
    }
  });

  it('the fast statement alone seals entries without hashes (enqueued before PendingHashes) by reading their rows: a batch whose Ids lie far apart (each row probed) and a dense one (their range read), mixed with hashed entries, in the order they were written', async () => {
    const leaves = t.app.get(AuditLeafRepository);
    const fast = jest.spyOn(leaves, 'appendFromPendingFast');
    const careful = jest.spyOn(leaves, 'appendFromPending');
    try {
      await sealAll();
      const written: string[] = [];
      await holdingSealLock(async () => {
        written.push((await insertLogin('sparse-before'))[0].Id);
        // An Id far past the others, written by hand: the batch's Ids are then not dense.
        written.push((await t.db.query<{ Id: string }>(`INSERT INTO "UserLogin" ("Id", "CreatedUser", "AuthenticationTypeId") VALUES (800000001, 'sparse-far', 1) RETURNING "Id"::text AS "Id"`))[0].Id);
        written.push((await insertLogin('sparse-after'))[0].Id);
        await unhash(written);
      });
      await sealAll();
      const dense: string[] = [];
      await holdingSealLock(async () => {
        for (let i = 0; i < 40; i++) dense.push((await insertLogin(`dense-${i}`))[0].Id);
        await unhash(dense.filter((_, i) => i % 2 === 0));
      });
      await sealAll();
      expect(fast).toHaveBeenCalled();
      expect(careful).not.toHaveBeenCalled();
      for (const ids of [written, dense]) {
        const indexes = await t.db.query<{ RowId: string }>(
          `SELECT "RowId"::text AS "RowId" FROM "AuditLeaf" WHERE "TableName" = 'UserLogin' AND "RowId" = ANY($1::bigint[]) ORDER BY "LeafIndex"`,
          [ids],
        );
        expect(indexes.map((r) => r.RowId)).toEqual(ids);
      }
      const [{ n, max }] = await t.db.query<{ n: number; max: number }>(`SELECT count(*)::int AS n, max("LeafIndex")::int AS max FROM "AuditLeaf"`);
      expect(max).toBe(n - 1);
    } finally {
      fast.mockRestore();
      careful.mockRestore();
    }
  });

  it('a row deleted behind the triggers\' back before it was sealed is sealed as it was committed (its hashes were taken at its insert), so its proof stands and its absence shows', async () => {
    await sealAll();
    const size = (await latest()).treeSize;
    let before = '';
    let gone = '';
    let after = '';
    let committed: Buffer | null = null;
    await holdingSealLock(async () => {
      [{ Id: before }] = await insertLogin('gone-before');
      [{ Id: gone }] = await insertLogin('gone');
      [{ Id: after }] = await insertLogin('gone-after');
      const [row] = await t.app.get(AuditedRowsRepository).byIds('UserLogin', [gone]);
      committed = sha256(canonicalRow('UserLogin', row));
      const client = new Client({ connectionString: t.db.url });
      await client.connect();
      try {
        // What only a superuser can do: skip the append-only trigger. The pending entry, with its hashes, stays.
        await client.query(`SET session_replication_role = replica`);
        await client.query(`DELETE FROM "UserLogin" WHERE "Id" = $1`, [gone]);
      } finally {
        await client.end();
      }
    });
    await sealAll();
    expect((await latest()).treeSize).toBe(size + 3);
    for (const rowId of [before, after]) expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${rowId}`)).status).toBe(200);
    // Proven in the log as committed; its row is gone, which `npm run audit:verify` names as tampering
    // (no retention run covers it: test/audit-verify.e2e-spec.ts).
    const proof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${gone}`);
    expect(proof.status).toBe(200);
    expect(proof.json.canonical).toBeNull();
    const [, rowId, , rowHash] = (proof.json.leafRecord as string).split('\n');
    expect(rowId).toBe(gone);
    expect(fromBase64(rowHash).equals(committed!)).toBe(true);
    expect(logs.count('error', /gone before they could be sealed/)).toBe(0);

    // An entry without hashes (enqueued before migration PendingHashes) has only its row to be sealed
    // from: gone, it is reported by the careful statement and the rows beside it are sealed.
    const next = (await latest()).treeSize;
    let lost = '';
    await holdingSealLock(async () => {
      [{ Id: before }] = await insertLogin('lost-before');
      [{ Id: lost }] = await insertLogin('lost');
      [{ Id: after }] = await insertLogin('lost-after');
      await unhash([lost]);
      await asSuperuser(t.db, [[`DELETE FROM "UserLogin" WHERE "Id" = $1`, [lost]]]);
    });
    await sealAll();
    expect((await latest()).treeSize).toBe(next + 2);
    for (const rowId of [before, after]) expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${rowId}`)).status).toBe(200);
    expect((await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${lost}`)).status).toBe(404);
    expect(logs.count('error', new RegExp(`^1 audit rows were written but are gone before they could be sealed, and are not in the log: UserLogin:${lost}$`))).toBe(1);
  });

  it('a row changed behind the triggers\' back before it was sealed is sealed as it was committed: its leaf contradicts the changed row', async () => {
    await sealAll();
    let id = '';
    let committed: Buffer | null = null;
    await holdingSealLock(async () => {
      [{ Id: id }] = await insertLogin('changed-later');
      const [row] = await t.app.get(AuditedRowsRepository).byIds('UserLogin', [id]);
      committed = sha256(canonicalRow('UserLogin', row));
      await asSuperuser(t.db, [[`UPDATE "UserLogin" SET "UserAgent" = 'forged/1.0' WHERE "Id" = $1`, [id]]]);
    });
    await sealAll();
    const proof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${id}`);
    expect(proof.status).toBe(200);
    expect(proof.json.canonical).toContain('"forged/1.0"');
    const rowHash = fromBase64((proof.json.leafRecord as string).split('\n')[3]);
    expect(rowHash.equals(committed!)).toBe(true);
    // What `npm run audit:verify` recomputes from the served row no longer gives the sealed row hash.
    expect(sha256(Buffer.from(proof.json.canonical as string, 'utf8')).equals(rowHash)).toBe(false);
  });

  it('hashes forged into a waiting entry by a superuser are sealed as forged, and the leaf contradicts the row it names', async () => {
    await sealAll();
    let id = '';
    await holdingSealLock(async () => {
      [{ Id: id }] = await insertLogin('forged-entry');
      // A self-consistent forgery: the row hash of other content, and the leaf hash that goes with it.
      const [{ date }] = await t.db.query<{ date: string }>(`SELECT to_char("RowCreatedDate" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "date" FROM "AuditPending" WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [id]);
      const forged = sha256(Buffer.from('["UserLogin","forged"]'));
      const leaf = sha256(Buffer.from([0]), Buffer.from(`UserLogin\n${id}\n${date}\n${forged.toString('base64')}\n`));
      await asSuperuser(t.db, [[`UPDATE "AuditPending" SET "RowHash" = $2, "LeafHash" = $3 WHERE "TableName" = 'UserLogin' AND "RowId" = $1`, [id, forged, leaf]]]);
    });
    await sealAll();
    const proof = await landlord.get(`/api/Audit/Proof?table=UserLogin&id=${id}`);
    expect(proof.status).toBe(200);
    expect(proof.json.canonical).toContain('"forged-entry"');
    const rowHash = fromBase64((proof.json.leafRecord as string).split('\n')[3]);
    // What `npm run audit:verify` recomputes from the row does not give the sealed row hash: named as changed.
    expect(sha256(Buffer.from(proof.json.canonical as string, 'utf8')).equals(rowHash)).toBe(false);
  });

  it('refuses to sign on a stored tree that no longer gives the latest signed root, and seals on once it is restored', async () => {
    await sealAll();
    // An odd size: the edge's last hash is the last leaf's own (read from AuditLeaf, not AuditTreeNode).
    if ((await latest()).treeSize % 2 === 0) {
      await insertLogin('edge-odd');
      await sealAll();
    }
    const size = (await latest()).treeSize;
    const setLeafHash = (hash: Buffer) => asSuperuser(t.db, [[`UPDATE "AuditLeaf" SET "LeafHash" = $2 WHERE "LeafIndex" = $1`, [size - 1, hash]]]);
    const [{ hash: original }] = await t.db.query<{ hash: Buffer }>(`SELECT "LeafHash" AS "hash" FROM "AuditLeaf" WHERE "LeafIndex" = $1`, [size - 1]);
    await setLeafHash(Buffer.alloc(32, 7));
    try {
      await insertLogin('edge-next');
      // Even the node that signed checkpoint `size` reads its edge from the tables, and refuses to sign on it.
      await expect(sealer().sealBatch()).rejects.toThrow(`the stored audit tree does not give the root of checkpoint ${size}: refusing to seal`);
      expect((await latest()).treeSize).toBe(size);
      expect((await t.db.query(`SELECT 1 FROM "AuditPending"`)).length).toBeGreaterThan(0);
    } finally {
      await setLeafHash(original);
    }
    // Restored, the waiting row is sealed on top of the signed tree.
    await sealAll();
    const next = await latest();
    expect(next.treeSize).toBe(size + 1);
    const stored = await t.db.query<{ hash: Buffer }>(`SELECT "LeafHash" AS "hash" FROM "AuditLeaf" ORDER BY "LeafIndex"`);
    expect(rootOf(stored.map((r) => r.hash))).toEqual(fromBase64(next.rootHash));
    expect(parseCheckpoint(next.note, verifier).treeSize).toBe(size + 1);
  });
});
