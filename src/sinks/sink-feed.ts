import { Injectable } from '@nestjs/common';
import { AuditCheckpointRepository } from '../audit-log/audit-checkpoint.repository';
import { AuditedRowsRepository } from '../audit-log/audited-rows.repository';
import { SealedLeaf } from './sink-events';

/**
 * What a sink sends next: sealed leaves from its cursor, only those a signed checkpoint covers, each
 * with its row (read now, null once retention removed it), its canonical form and the checkpoint
 * that first covered it (contract 19). Two indexed reads per batch, side by side, whatever the size
 * of the log: the leaves with their rows and canonical forms built in SQL, and the covering checkpoints.
 */
@Injectable()
export class SinkFeed {
  constructor(
    private readonly checkpoints: AuditCheckpointRepository,
    private readonly rows: AuditedRowsRepository,
  ) {}

  /** Leaves first ≤ index < min(first + limit, treeSize), in order. `treeSize`: the latest signed checkpoint's. */
  async batch(first: number, limit: number, treeSize: number): Promise<SealedLeaf[]> {
    const end = Math.min(first + limit, treeSize);
    if (end <= first) return [];
    const [leaves, covering] = await Promise.all([this.rows.leavesWithRows(first, end), this.checkpoints.covering(first, end)]);
    const roots = covering.map((checkpoint) => checkpoint.rootHash.toString('base64'));
    const out: SealedLeaf[] = [];
    let c = 0;
    for (const leaf of leaves) {
      // Leaves are gapless (contract 15): a missing index means the read raced nothing we can send; stop there.
      if (leaf.leafIndex !== first + out.length) break;
      while (c < covering.length && covering[c].treeSize <= leaf.leafIndex) c++;
      if (c >= covering.length) break;
      out.push({
        leafIndex: leaf.leafIndex,
        table: leaf.table,
        rowId: leaf.rowId,
        rowDate: leaf.rowDate,
        rowHash: leaf.rowHash,
        leafHash: leaf.leafHash,
        // The row's columns are read by name (event-facts.ts); the leaf's own fields beside them are not.
        row: leaf.found ? leaf : null,
        canonical: leaf.found ? leaf.canonical : null,
        treeSize: covering[c].treeSize,
        rootHash: roots[c],
      });
    }
    return out;
  }
}
