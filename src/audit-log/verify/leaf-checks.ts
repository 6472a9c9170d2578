import { CANONICAL_TIMESTAMP, canonicalIdentity, isSealedTable, leafRecord, sha256, type SealedTableName } from '../canonical';
import { leafHash } from '../merkle';
import type { ServedLeaf } from './client';

/** A leaf as the verifier knows it once its record is rebuilt and its hash recomputed. */
export interface CheckedLeaf {
  index: number;
  table: SealedTableName;
  rowId: string;
  rowCreatedDate: string;
  leafHash: Buffer;
  /** The row's canonical form when it is still there; null when the row is gone. */
  canonical: Buffer | null;
}

export type LeafCheck = { ok: true; leaf: CheckedLeaf } | { ok: false; problem: string };

/** "leaf 7 (UserLogin 42)": how every message names a leaf. */
export function nameLeaf(index: number, table: string, rowId: string): string {
  return `leaf ${index} (${table} ${rowId})`;
}

function base64Hash(value: string): Buffer | null {
  const bytes = Buffer.from(value, 'base64');
  return bytes.length === 32 && bytes.toString('base64') === value ? bytes : null;
}

/**
 * Everything one leaf proves by itself: it sits at the index it should, its leaf hash is the hash of
 * its leaf record, and, while its row is there, the row's canonical form hashes to the leaf's row hash
 * and names the same table, id and date. Pure: the caller decides what a missing row means.
 */
export function checkLeaf(served: ServedLeaf, expectedIndex: number): LeafCheck {
  const name = nameLeaf(expectedIndex, served.table, served.rowId);
  if (served.leafIndex !== expectedIndex) {
    return served.leafIndex > expectedIndex
      ? { ok: false, problem: `leaf ${expectedIndex}: missing, the log jumps to leaf ${served.leafIndex} (a leaf was deleted)` }
      : { ok: false, problem: `leaf ${expectedIndex}: the service answered leaf ${served.leafIndex} in its place (leaves duplicated or reordered)` };
  }
  if (!isSealedTable(served.table)) return { ok: false, problem: `${name}: not an audit table (leaf changed)` };
  if (!/^(0|[1-9]\d*)$/.test(served.rowId)) return { ok: false, problem: `${name}: the row id is not a decimal number (leaf changed)` };
  if (!CANONICAL_TIMESTAMP.test(served.rowCreatedDate)) {
    return { ok: false, problem: `${name}: the date ${JSON.stringify(served.rowCreatedDate)} is not a canonical timestamp (leaf changed)` };
  }
  const rowHash = base64Hash(served.rowHash);
  const storedLeafHash = base64Hash(served.leafHash);
  if (!rowHash || !storedLeafHash) return { ok: false, problem: `${name}: a hash is not 32 bytes of base64 (leaf changed)` };
  const record = leafRecord(served.table, served.rowId, served.rowCreatedDate, rowHash);
  const hash = leafHash(record);
  if (!hash.equals(storedLeafHash)) return { ok: false, problem: `${name}: its leaf hash is not the hash of its leaf record (leaf changed)` };

  let canonical: Buffer | null = null;
  if (served.canonical !== null) {
    canonical = Buffer.from(served.canonical, 'utf8');
    if (!sha256(canonical).equals(rowHash)) return { ok: false, problem: `${name}: row changed (its canonical form no longer hashes to the sealed row hash)` };
    // The hash matched, so the bytes are the sealed ones; still, they must name this very row.
    let identity: ReturnType<typeof canonicalIdentity>;
    try {
      identity = canonicalIdentity(canonical);
    } catch (error) {
      return { ok: false, problem: `${name}: the sealed row is not a canonical form (${(error as Error).message})` };
    }
    if (identity.table !== served.table || identity.id !== served.rowId || identity.date !== served.rowCreatedDate) {
      return {
        ok: false,
        problem: `${name}: the row's table, id or date (${identity.table} ${identity.id} ${identity.date}) is not the leaf's (leaf changed)`,
      };
    }
  }
  return { ok: true, leaf: { index: expectedIndex, table: served.table, rowId: served.rowId, rowCreatedDate: served.rowCreatedDate, leafHash: hash, canonical } };
}
