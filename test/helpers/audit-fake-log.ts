import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LEAF_DATE_COLUMN, canonicalRow, leafRecord, sha256, type AuditRowText, type SealedTableName } from '../../src/audit-log/canonical';
import { CompactRange, consistencyProof, inclusionProof, leafHash, rootOf, type PerfectSubtree } from '../../src/audit-log/merkle';
import { rawPublicKey, signCheckpoint, verifierKey } from '../../src/audit-log/note';
import type { LeafView } from '../../src/audit-log/audit-log.service';
import type { ServedCheckpoint } from '../../src/audit-log/verify/client';

/** A leaf as GET /api/Audit/Leaves answers it: the service's own view. */
export type FakeLeaf = LeafView;
/** A checkpoint as the routes answer it once serialised (createdDate a string): what the verifier reads. */
export type FakeCheckpoint = ServedCheckpoint;

/**
 * An audit log of contract 15 built in memory from the pure modules, served over HTTP the way the
 * routes answer, for testing the verifier alone. Tests tamper with the public arrays as an attacker
 * with the database would: `leaves` (AuditLeaf joined with the rows), `checkpoints`, `runs`. Proofs
 * come from the perfect subtrees stored when leaves were sealed, as a real store keeps them.
 */
export class FakeAuditLog {
  readonly origin = 'transaction-monitoring/audit/test';
  readonly privateKey: KeyObject = generateKeyPairSync('ed25519').privateKey;
  readonly apiKey = 'fake-api-key';
  leaves: FakeLeaf[] = [];
  checkpoints: FakeCheckpoint[] = [];
  /** Rows outside the log, as GET /api/Audit/Outside answers them (contract 18). */
  outside: { table: string; rowId: string; createdDate: string; canonical: string; reason: 'not-in-log' | 'waiting' }[] = [];
  runs: Array<{ id: string; runDate: string; tableName: string; partitionName: string; cutoff: string; rowCount: number }> = [];
  /** Perfect-subtree hashes as stored at sealing time: `${level}/${index}`. */
  readonly stored = new Map<string, Buffer>();
  private readonly range = new CompactRange(0, []);
  private pending: Array<{ table: SealedTableName; row: AuditRowText }> = [];
  private nextId = 1;
  private server: Server | null = null;
  url = '';

  constructor() {
    this.checkpoint();
  }

  get verifierKey(): string {
    return verifierKey(this.origin, rawPublicKey(this.privateKey));
  }

  /** A sign-in row, written but not sealed yet. */
  login(user: string, date: string): string {
    const id = String(this.nextId++);
    this.pending.push({
      table: 'UserLogin',
      row: { Id: id, CreatedDate: date, CreatedUser: user, UserRegistryId: '1', TenantRegistryId: '1', AuthenticationTypeId: '1', Failed: 'f', FailureTypeId: null, FailureMessage: null, RemoteIp: '203.0.113.9', LocalIp: '10.0.0.5', UserAgent: 'curl/8.5.0' },
    });
    return id;
  }

  logout(user: string, date: string): string {
    const id = String(this.nextId++);
    this.pending.push({
      table: 'UserLogout',
      row: { Id: id, CreatedDate: date, CreatedUser: user, UserRegistryId: '1', TenantRegistryId: '1', ReasonId: '1', OutcomeId: '1', RemoteIp: null, LocalIp: null, UserAgent: null, SessionStartDate: null, CutByUser: null, Message: null },
    });
    return id;
  }

  /** A retention run row (contract 16), written but not sealed yet; its rows are removed by `removeRows`. */
  retentionRun(tableName: SealedTableName, cutoff: string, runDate: string): string {
    const id = String(this.nextId++);
    const row = { Id: id, RunDate: runDate, TableName: tableName, PartitionName: `${tableName}_p`, Cutoff: cutoff, RowCount: '0' };
    this.runs.push({ id, runDate, tableName, partitionName: row.PartitionName, cutoff, rowCount: 0 });
    this.pending.push({ table: 'AuditRetentionRun', row });
    return id;
  }

  /** Seals the waiting rows as leaves and signs a checkpoint, as the sealer does. */
  seal(): void {
    for (const { table, row } of this.pending) {
      const canonical = canonicalRow(table, row);
      const rowHash = sha256(canonical);
      const date = String(row[LEAF_DATE_COLUMN[table]]);
      const rowId = String(row.Id);
      const record = leafRecord(table, rowId, date, rowHash);
      const index = this.range.size;
      this.range.append(leafHash(record), (level, i, hash) => this.stored.set(`${level}/${i}`, hash));
      this.leaves.push({
        leafIndex: index,
        table,
        rowId,
        rowCreatedDate: date,
        rowHash: rowHash.toString('base64'),
        leafHash: this.stored.get(`0/${index}`)!.toString('base64'),
        canonical: canonical.toString('utf8'),
      });
    }
    this.pending = [];
    this.checkpoint();
  }

  private checkpoint(): void {
    const root = this.range.root();
    this.checkpoints.push({
      treeSize: this.range.size,
      rootHash: root.toString('base64'),
      createdDate: new Date().toISOString(),
      note: signCheckpoint(this.origin, this.range.size, root, this.privateKey),
    });
  }

  /** The row of a leaf as the database holds it now (null: gone). */
  setCanonical(index: number, canonical: string | null): void {
    this.leaves[index].canonical = canonical;
  }

  /**
   * Below this level, proofs are computed from the leaves as they are now (what a service keeping only
   * every fourth level does); from it up, from the hashes stored at sealing time. 0: all stored.
   */
  recomputedBelowLevel = 0;

  private perfect: PerfectSubtree = async (level, index) => {
    if (level < this.recomputedBelowLevel) {
      const from = index * 2 ** level;
      const hashes = this.leaves.filter((l) => l.leafIndex >= from && l.leafIndex < from + 2 ** level).map((l) => Buffer.from(l.leafHash, 'base64'));
      return rootOf(hashes);
    }
    const hash = this.stored.get(`${level}/${index}`);
    if (!hash) throw new Error(`no node ${level}/${index}`);
    return hash;
  };

  private async answer(url: URL): Promise<[number, unknown]> {
    const q = (name: string): number => Number(url.searchParams.get(name));
    switch (url.pathname) {
      case '/api/Audit/PublicKey': {
        const raw = rawPublicKey(this.privateKey);
        return [200, { origin: this.origin, keyId: this.verifierKey.split('+')[1], publicKey: raw.toString('base64'), verifierKey: this.verifierKey }];
      }
      case '/api/Audit/Checkpoint':
        return [200, this.checkpoints[this.checkpoints.length - 1]];
      case '/api/Audit/Checkpoints':
        return [200, this.checkpoints.filter((c) => c.treeSize >= q('from')).slice(0, 1000)];
      case '/api/Audit/Leaves':
        return [200, this.leaves.filter((l) => l.leafIndex >= q('start') && l.leafIndex < q('end')).slice(0, 10_000)];
      case '/api/Audit/RetentionRuns':
        return [200, this.runs];
      case '/api/Audit/Outside':
        return [200, { total: this.outside.length, rows: this.outside }];
      case '/api/Audit/Consistency':
        return [200, { first: q('first'), second: q('second'), proof: (await consistencyProof(q('first'), q('second'), this.perfect)).map((h) => h.toString('base64')) }];
      case '/api/Audit/Proof': {
        const treeSize = q('treeSize');
        const leaf = this.leaves.find((l) => l.table === url.searchParams.get('table') && l.rowId === url.searchParams.get('id') && l.leafIndex < treeSize);
        if (!leaf) return [404, { title: 'Not Found' }];
        return [
          200,
          {
            leafIndex: leaf.leafIndex,
            treeSize,
            leafHash: leaf.leafHash,
            leafRecord: leafRecord(leaf.table, leaf.rowId, leaf.rowCreatedDate, Buffer.from(leaf.rowHash, 'base64')).toString('utf8'),
            canonical: leaf.canonical,
            auditPath: (await inclusionProof(leaf.leafIndex, treeSize, this.perfect)).map((h) => h.toString('base64')),
          },
        ];
      }
      default:
        return [404, { title: 'Not Found' }];
    }
  }

  async listen(): Promise<string> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const send = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': status === 200 ? 'application/json' : 'application/problem+json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers['x-api-key'] !== this.apiKey) return send(401, { title: 'Unauthorized', detail: 'Key Not Found' });
      this.answer(url).then(([status, body]) => send(status, body), (error: Error) => send(500, { title: error.message }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
