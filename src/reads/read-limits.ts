import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../access/principal';
import { ProblemError } from '../common/problem';

/** Concurrent CSV exports one user may run (contract 13). */
export const EXPORTS_PER_USER = 2;
/** Seconds a refused export is told to wait before trying again. */
const EXPORT_RETRY_AFTER_SECONDS = 10;
/** Longest a JSON read waits for a free read slot before it is refused. */
const READ_WAIT_MS = 10_000;
/** Most JSON reads waiting for a slot; beyond it they are refused at once (bounded memory). */
const MAX_WAITING_READS = 200;

const tooMany = (detail: string, retryAfterSeconds: number) =>
  new ProblemError(429, 'Too Many Requests', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** The size of the service's PostgreSQL pool (TypeORM's `extra.max`). */
function poolSize(dataSource: DataSource): number {
  const extra = (dataSource.options as { extra?: { max?: unknown } }).extra;
  return typeof extra?.max === 'number' && extra.max > 0 ? extra.max : 10;
}

/**
 * Bulkheads that keep grid reads from starving every other request of database connections.
 *
 * - A CSV export holds a connection only while it reads a batch, but a slow or stalled client keeps
 *   the export alive: at most 2 per user and a quarter of the pool per node run at once (contract 13);
 *   beyond that the answer is 429 with Retry-After.
 * - A JSON read holds its connection while its rows stream, and a slow reader slows that stream down
 *   (the connection is released when the last row has left or the reader is cut off after 30 s
 *   without taking data). At most half of the pool serves JSON reads at once; further reads wait
 *   their turn for up to 10 s, then get 429.
 *
 * Whatever the clients do, at least a quarter of the pool stays free for everything else.
 */
@Injectable()
export class ReadLimits {
  readonly exportsPerNode: number;
  readonly readsPerNode: number;
  private readonly exportsByUser = new Map<number, number>();
  private exports = 0;
  private reads = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(@InjectDataSource() dataSource: DataSource) {
    const size = poolSize(dataSource);
    this.exportsPerNode = Math.max(1, Math.floor(size / 4));
    this.readsPerNode = Math.max(1, Math.floor(size / 2));
  }

  /** Claims an export slot for the caller, or throws 429. The returned release may be called more than once. */
  claimExport(principal: Principal): () => void {
    const user = principal.userRegistryId;
    const mine = this.exportsByUser.get(user) ?? 0;
    if (mine >= EXPORTS_PER_USER) {
      throw tooMany(`At most ${EXPORTS_PER_USER} exports per user run at once; wait for one to finish.`, EXPORT_RETRY_AFTER_SECONDS);
    }
    if (this.exports >= this.exportsPerNode) {
      throw tooMany('Too many exports are running; try again shortly.', EXPORT_RETRY_AFTER_SECONDS);
    }
    this.exportsByUser.set(user, mine + 1);
    this.exports++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.exports--;
      const left = (this.exportsByUser.get(user) ?? 1) - 1;
      if (left > 0) this.exportsByUser.set(user, left);
      else this.exportsByUser.delete(user);
    };
  }

  /** Waits for a JSON read slot (first come, first served), or throws 429 when none frees up in time. */
  async claimRead(): Promise<() => void> {
    if (this.reads < this.readsPerNode && this.waiting.length === 0) {
      this.reads++;
      return this.releaser();
    }
    if (this.waiting.length >= MAX_WAITING_READS) throw tooMany('Too many reads are waiting; try again shortly.', 1);
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(tooMany('Too many reads are running; try again shortly.', 1));
      }, READ_WAIT_MS);
      this.waiting.push(waiter);
    });
    return this.releaser();
  }

  /** A release for a read slot that is already counted; handing it on keeps the count. */
  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.reads--;
    };
  }
}
