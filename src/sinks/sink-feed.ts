import { Injectable } from '@nestjs/common';
import { AuditCheckpointRepository } from '../audit-log/audit-checkpoint.repository';
import { AuditLeafRepository } from '../audit-log/audit-leaf.repository';
import { AuditedRowsRepository } from '../audit-log/audited-rows.repository';
import { SEALED_TABLES, canonicalRow, LEAF_DATE_COLUMN } from '../audit-log/canonical';
import { SealedLeaf } from './sink-events';

/**
 * What a sink sends next: sealed leaves from its cursor, only those a signed checkpoint covers, each
 * with its row (read now, null once retention removed it), its canonical form and the checkpoint
 * that first covered it (contract 19). A few indexed reads per batch, whatever the size of the log.
 */
@Injectable()
export class SinkFeed {
  constructor(
    private readonly leaves: AuditLeafRepository,
    private readonly checkpoints: AuditCheckpointRepository,
    private readonly rows: AuditedRowsRepository,
  ) {}

  /** Leaves first ≤ index < min(first + limit, treeSize), in order. `treeSize`: the latest signed checkpoint's. */
  async batch(first: number, limit: number, treeSize: number): Promise<SealedLeaf[]> {
    const end = Math.min(first + limit, treeSize);
    if (end <= first) return [];
    const [leaves, covering] = await Promise.all([this.leaves.range(first, end), this.checkpoints.covering(first, end)]);
    const leafDates = new Map(leaves.map((leaf) => [`${leaf.tableName}:${leaf.rowId}`, leaf.rowCreatedDate]));
    const rows = new Map<string, Record<string, string | boolean | null>>();
    await Promise.all(
      SEALED_TABLES.map(async (table) => {
        const ids = leaves.filter((leaf) => leaf.tableName === table).map((leaf) => leaf.rowId);
        for (const row of await this.rows.byIds(table, ids)) {
          const key = `${table}:${row.Id as string}`;
          // A repeated Id (two rows, one of them outside the log): the one dated as the leaf is the one sent.
          if (!rows.has(key) || row[LEAF_DATE_COLUMN[table]] === leafDates.get(key)) rows.set(key, row);
        }
      }),
    );
    const out: SealedLeaf[] = [];
    let c = 0;
    for (const leaf of leaves) {
      // Leaves are gapless (contract 15): a missing index means the read raced nothing we can send; stop there.
      if (leaf.leafIndex !== first + out.length) break;
      while (c < covering.length && covering[c].treeSize <= leaf.leafIndex) c++;
      if (c >= covering.length) break;
      const row = rows.get(`${leaf.tableName}:${leaf.rowId}`) ?? null;
      let canonical: string | null = null;
      if (row) {
        try {
          canonical = canonicalRow(leaf.tableName, row).toString('utf8');
        } catch {
          canonical = null;
        }
      }
      out.push({
        leafIndex: leaf.leafIndex,
        table: leaf.tableName,
        rowId: leaf.rowId,
        rowDate: leaf.rowCreatedDate,
        rowHash: leaf.rowHash,
        leafHash: leaf.leafHash,
        row,
        canonical,
        treeSize: covering[c].treeSize,
        rootHash: covering[c].rootHash,
      });
    }
    return out;
  }
}
