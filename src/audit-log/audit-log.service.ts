import { Inject, Injectable } from '@nestjs/common';
import { badRequest, notFound } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SEALED_TABLES, SealedTableName, canonicalRow, isSealedTable, leafRecord } from './canonical';
import { consistencyProof, inclusionProof } from './merkle';
import { AuditCheckpointRepository, CheckpointRow } from './audit-checkpoint.repository';
import { AuditLeafRepository, LeafRow } from './audit-leaf.repository';
import { AuditPendingRepository } from './audit-pending.repository';
import { AuditRetentionRunRepository, RetentionRunRow } from './audit-retention-run.repository';
import { AuditSigner } from './audit-signer';
import { AuditTreeRepository } from './audit-tree.repository';
import { AuditedRowsRepository } from './audited-rows.repository';
import { CHECKPOINTS_PAGE, LEAVES_PAGE } from './pages';

export { CHECKPOINTS_PAGE, LEAVES_PAGE };

export interface PublicKeyView {
  origin: string;
  keyId: string;
  publicKey: string;
  verifierKey: string;
}
export interface CheckpointView {
  treeSize: number;
  rootHash: string;
  createdDate: Date;
  note: string;
}
export interface ProofView {
  leafIndex: number;
  treeSize: number;
  leafHash: string;
  leafRecord: string;
  canonical: string | null;
  auditPath: string[];
}
export interface ConsistencyView {
  first: number;
  second: number;
  proof: string[];
}
export interface LeafView {
  leafIndex: number;
  table: SealedTableName;
  rowId: string;
  rowCreatedDate: string;
  rowHash: string;
  leafHash: string;
  canonical: string | null;
}
export interface StatusView {
  latest: CheckpointView | null;
  pendingRows: number;
  oldestPendingSeconds: number | null;
  sealIntervalMilliseconds: number;
  lastRetentionRun: RetentionRunRow | null;
  verifierKey: string;
}

const b64 = (buffer: Buffer) => buffer.toString('base64');
const checkpointView = (row: CheckpointRow): CheckpointView => ({
  treeSize: row.treeSize,
  rootHash: b64(row.rootHash),
  createdDate: row.createdDate,
  note: row.note,
});

/** The reads of the log (contract 15 routes): proofs computed from the stored perfect subtrees. */
@Injectable()
export class AuditLogService {
  constructor(
    private readonly leaves: AuditLeafRepository,
    private readonly checkpoints: AuditCheckpointRepository,
    private readonly pending: AuditPendingRepository,
    private readonly tree: AuditTreeRepository,
    private readonly rows: AuditedRowsRepository,
    private readonly retention: AuditRetentionRunRepository,
    private readonly signer: AuditSigner,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  publicKey(): PublicKeyView {
    return { origin: this.signer.origin, keyId: this.signer.keyId.toString('hex'), publicKey: b64(this.signer.publicKey), verifierKey: this.signer.verifierKey };
  }

  async checkpoint(treeSize?: number): Promise<CheckpointView> {
    const row = treeSize === undefined ? await this.checkpoints.latest() : await this.checkpoints.bySize(treeSize);
    if (!row) throw notFound(treeSize === undefined ? 'No checkpoint yet.' : `No checkpoint has tree size ${treeSize}.`);
    return checkpointView(row);
  }

  async checkpointsFrom(from: number): Promise<CheckpointView[]> {
    return (await this.checkpoints.from(from, CHECKPOINTS_PAGE)).map(checkpointView);
  }

  async proof(table: string, rowId: string, treeSize?: number): Promise<ProofView> {
    if (!isSealedTable(table)) throw badRequest(`table: expected one of ${SEALED_TABLES.join(', ')}.`, [{ field: 'table', message: `one of ${SEALED_TABLES.join(', ')}` }]);
    const checkpoint = await this.checkpoint(treeSize);
    const leaf = await this.leaves.byRow(table, rowId);
    if (!leaf || leaf.leafIndex >= checkpoint.treeSize) throw notFound(`${table} row ${rowId} is not sealed in the checkpoint of size ${checkpoint.treeSize}.`);
    const [auditPath, canonical] = await Promise.all([
      inclusionProof(leaf.leafIndex, checkpoint.treeSize, this.tree.reader()),
      this.canonicalOf([leaf]),
    ]);
    return {
      leafIndex: leaf.leafIndex,
      treeSize: checkpoint.treeSize,
      leafHash: b64(leaf.leafHash),
      leafRecord: recordOf(leaf).toString('utf8'),
      canonical: canonical.get(`${leaf.tableName}:${leaf.rowId}`) ?? null,
      auditPath: auditPath.map(b64),
    };
  }

  /** Between two checkpoint sizes; 404 when either is not a checkpoint. */
  async consistency(first: number, second: number): Promise<ConsistencyView> {
    if (first > second) throw badRequest('first: must not be greater than second.', [{ field: 'first', message: 'at most second' }]);
    for (const size of [first, second]) if (!(await this.checkpoints.bySize(size))) throw notFound(`No checkpoint has tree size ${size}.`);
    const proof = await consistencyProof(first, second, this.tree.reader());
    return { first, second, proof: proof.map(b64) };
  }

  async leavesBetween(start: number, end: number): Promise<LeafView[]> {
    if (end < start) throw badRequest('end: must not be less than start.', [{ field: 'end', message: 'at least start' }]);
    if (end - start > LEAVES_PAGE) throw badRequest(`end: at most ${LEAVES_PAGE} leaves at once.`, [{ field: 'end', message: `at most start + ${LEAVES_PAGE}` }]);
    const leaves = await this.leaves.range(start, end);
    const canonical = await this.canonicalOf(leaves);
    return leaves.map((leaf) => ({
      leafIndex: leaf.leafIndex,
      table: leaf.tableName,
      rowId: leaf.rowId,
      rowCreatedDate: leaf.rowCreatedDate,
      rowHash: b64(leaf.rowHash),
      leafHash: b64(leaf.leafHash),
      canonical: canonical.get(`${leaf.tableName}:${leaf.rowId}`) ?? null,
    }));
  }

  retentionRuns(): Promise<RetentionRunRow[]> {
    return this.retention.all();
  }

  async status(): Promise<StatusView> {
    const [latest, pending, lastRetentionRun] = await Promise.all([this.checkpoints.latest(), this.pending.status(), this.retention.latest()]);
    return {
      latest: latest && checkpointView(latest),
      pendingRows: pending.rows,
      oldestPendingSeconds: pending.oldestSeconds,
      sealIntervalMilliseconds: this.settings.auditSealIntervalMs,
      lastRetentionRun,
      verifierKey: this.signer.verifierKey,
    };
  }

  /** The current canonical form of each leaf's row, keyed `<table>:<rowId>`; absent where the row is gone. */
  private async canonicalOf(leaves: LeafRow[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const table of SEALED_TABLES) {
      const ids = leaves.filter((leaf) => leaf.tableName === table).map((leaf) => leaf.rowId);
      for (const row of await this.rows.byIds(table, ids)) {
        const key = `${table}:${row.Id as string}`;
        if (found.has(key)) continue;
        try {
          found.set(key, canonicalRow(table, row).toString('utf8'));
        } catch {
          // A row changed behind the triggers' back into something no canonical form holds: served as
          // absent (null), which a verifier reports as a row missing from its leaf.
        }
      }
    }
    return found;
  }
}

function recordOf(leaf: LeafRow): Buffer {
  return leafRecord(leaf.tableName, leaf.rowId, leaf.rowCreatedDate, leaf.rowHash);
}
