import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { PerfectSubtree, rootOf } from './merkle';
import { AuditLeafRepository } from './audit-leaf.repository';
import { AuditTreeNode } from './audit-log.entities';

/**
 * Levels kept in AuditTreeNode: every TILE_HEIGHT-th (4, 8, 12, …); level 0 is AuditLeaf.LeafHash.
 * Any perfect subtree is then at most 2^(TILE_HEIGHT-1) = 8 stored hashes folded together (one
 * indexed range read), and the table holds about n/15 rows for n leaves instead of n (every level):
 * the sealer writes a fifteenth of the rows it would otherwise, and a proof still reads O(log n).
 */
export const TILE_HEIGHT = 4;

/** A node the sealer completed and keeps. */
export interface NewTreeNode {
  level: number;
  index: number;
  hash: Buffer;
}

/** Every statement on AuditTreeNode, and the answer to "the hash of this perfect subtree". */
@Injectable()
export class AuditTreeRepository {
  constructor(
    @InjectRepository(AuditTreeNode) private readonly repository: Repository<AuditTreeNode>,
    private readonly leaves: AuditLeafRepository,
  ) {}

  /** Whether the sealer keeps the perfect subtree at this level (it reports all of them). */
  static kept(level: number): boolean {
    return level > 0 && level % TILE_HEIGHT === 0;
  }

  async append(tx: EntityManager, nodes: NewTreeNode[]): Promise<void> {
    if (nodes.length === 0) return;
    // As AuditLeafRepository.append: the hashes as one byte string of 32-byte slices.
    await tx.query(
      `INSERT INTO "AuditTreeNode" ("Level", "Index", "Hash")
       SELECT l, i, substring($3::bytea FROM (n - 1)::int * 32 + 1 FOR 32) FROM unnest($1::smallint[], $2::bigint[]) WITH ORDINALITY AS u(l, i, n)`,
      [nodes.map((n) => n.level), nodes.map((n) => n.index), Buffer.concat(nodes.map((n) => n.hash))],
    );
  }

  /**
   * A PerfectSubtree reader (audit-log/merkle.ts) over the stored levels: the subtree (level, index)
   * is 2^(level − base) stored hashes of the kept level `base` below it, folded. Memoised for one
   * proof, inside `tx` when given. Throws if storage misses a hash (never silently a wrong root).
   * One reader serves one proof or one seal; a new one per request.
   */
  reader(tx?: EntityManager): PerfectSubtree {
    const memo = new Map<string, Promise<Buffer>>();
    const manager = tx ?? this.repository.manager;
    // One read at a time: a proof asks for ~2·log2(n) subtrees at once, which would otherwise take as
    // many pool connections from sign-ins (or queue on the one connection of a transaction).
    let queue: Promise<unknown> = Promise.resolve();
    return (level, index) => {
      const key = `${level}:${index}`;
      let found = memo.get(key);
      if (!found) {
        found = queue.then(() => this.read(manager, level, index));
        queue = found.catch(() => undefined);
        memo.set(key, found);
      }
      return found;
    };
  }

  private async read(manager: EntityManager, level: number, index: number): Promise<Buffer> {
    const base = level - (level % TILE_HEIGHT);
    const count = 2 ** (level - base);
    const from = index * count;
    const hashes =
      base === 0
        ? await this.leaves.hashes(from, from + count, manager)
        : (
            (await manager.query(
              `SELECT "Hash" AS "hash" FROM "AuditTreeNode" WHERE "Level" = $1 AND "Index" >= $2 AND "Index" < $3 ORDER BY "Index"`,
              [base, from, from + count],
            )) as { hash: Buffer }[]
          ).map((r) => r.hash);
    if (hashes.length !== count) throw new Error(`the audit tree misses hashes under the subtree at level ${level}, index ${index}`);
    return count === 1 ? hashes[0] : rootOf(hashes);
  }

  /** The right edge of a tree of `size` leaves (largest subtree first): what CompactRange appends to. */
  async edge(size: number, tx?: EntityManager): Promise<Buffer[]> {
    const perfect = this.reader(tx);
    const edge: Buffer[] = [];
    for (let level = Math.floor(Math.log2(Math.max(size, 1))) + 1; level >= 0; level--) {
      const width = 2 ** level;
      if (Math.floor(size / width) % 2 === 1) edge.push(await perfect(level, Math.floor(size / width) - 1));
    }
    return edge;
  }
}
