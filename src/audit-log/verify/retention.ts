import { CANONICAL_TIMESTAMP, LEAF_DATE_COLUMN, leafRecord, parseCanonicalRow, parseLeafRecord, sha256, type SealedTableName } from '../canonical';
import { leafHash, verifyInclusion } from '../merkle';
import type { ServedProof } from './client';

/** A retention run as sealed: its own leaf, the table it emptied, its Cutoff and RunDate (canonical text). */
export interface SealedRun {
  id: string;
  leafIndex: number;
  tableName: string;
  cutoff: string;
  runDate: string;
}

/** Microseconds since the epoch of a canonical timestamp (exact: below 2^53 until year 2255). */
export function timestampMicros(canonical: string): number {
  if (!CANONICAL_TIMESTAMP.test(canonical)) throw new Error(`not a canonical timestamp: ${canonical}`);
  return Date.parse(`${canonical.slice(0, 19)}Z`) * 1000 + Number(canonical.slice(20, 26));
}

/**
 * A retention run proven from the service's inclusion proof: its canonical form hashes to its leaf's
 * row hash, the leaf record names run `id`, and the leaf is in the signed tree of `treeSize` leaves
 * whose root is `root`. Returns the run, or a sentence saying why it cannot be counted.
 */
export function provenRun(id: string, proof: ServedProof | null, treeSize: number, root: Buffer): SealedRun | string {
  if (!proof) return `retention run ${id}: not sealed in checkpoint ${treeSize}, not counted`;
  let record;
  try {
    record = parseLeafRecord(Buffer.from(proof.leafRecord, 'utf8'));
  } catch (error) {
    return `retention run ${id}: its leaf record is malformed (${(error as Error).message}), not counted`;
  }
  if (record.table !== 'AuditRetentionRun' || record.rowId !== id) return `retention run ${id}: the proof is for another row, not counted`;
  const hash = leafHash(leafRecord(record.table, record.rowId, record.rowCreatedDate, record.rowHash));
  const path = proof.auditPath.map((h) => Buffer.from(h, 'base64'));
  if (proof.treeSize !== treeSize || !verifyInclusion(proof.leafIndex, treeSize, hash, path, root)) {
    return `retention run ${id}: its inclusion proof does not verify against checkpoint ${treeSize}, not counted`;
  }
  if (proof.canonical === null) return `retention run ${id}: its row is gone, not counted`;
  const canonical = Buffer.from(proof.canonical, 'utf8');
  if (!sha256(canonical).equals(record.rowHash)) return `retention run ${id}: row changed since it was sealed, not counted`;
  const { table, row } = parseCanonicalRow(canonical);
  if (table !== 'AuditRetentionRun' || row.Id !== id || row[LEAF_DATE_COLUMN.AuditRetentionRun] !== record.rowCreatedDate) {
    return `retention run ${id}: its row is not the one its leaf names, not counted`;
  }
  return { id, leafIndex: proof.leafIndex, tableName: String(row.TableName), cutoff: String(row.Cutoff), runDate: String(row.RunDate) };
}

/**
 * Contract 15/16: a leaf whose row is gone counts as removed by retention only when a retention run of
 * its table, itself sealed at a later leaf, has a Cutoff later than the leaf's date, and, when an
 * interval is given, a Cutoff at least that interval before the run's RunDate. Returns the covering
 * run or null.
 */
export function coveringRun(
  runs: readonly SealedRun[],
  leaf: { index: number; table: SealedTableName; rowCreatedDate: string },
  retentionMs: number | null,
): SealedRun | null {
  const date = timestampMicros(leaf.rowCreatedDate);
  for (const run of runs) {
    if (run.tableName !== leaf.table || run.leafIndex <= leaf.index) continue;
    const cutoff = timestampMicros(run.cutoff);
    if (!(cutoff > date)) continue;
    if (retentionMs !== null && cutoff > timestampMicros(run.runDate) - retentionMs * 1000) continue;
    return run;
  }
  return null;
}
