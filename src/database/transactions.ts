import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { MARK_SERVICE_CHANGE_SQL } from './service-change-mark';

/** What a compare-and-set attempt answers when the row was no longer as it read it (database/recorded-change.ts). */
export const MISSED: unique symbol = Symbol('compare-and-set missed');

/**
 * Attempts of a change by compare-and-set before it takes the row lock instead. One: a registry member
 * change compares only what its checks relied on (a user's role, a tenant's landlord flag; decision
 * 0037), so a miss is rare, and when others are changing exactly that a second plain attempt mostly
 * misses again (measured under 0034 with 4 writers on one row: three attempts cost 1.7-1.8x the service
 * CPU of the build before AdminChange, one 1.4-1.6x). The locking transaction then checks again and
 * cannot miss, so the caller still gets its answer (not a 409 or 503 for a change that is valid).
 */
export const COMPARE_AND_SET_ATTEMPTS = 1;

/**
 * Runs work in one database transaction. Services that change several tables at once open it here
 * and hand the transaction to each repository method they call (the optional `tx` argument; the
 * repository then works through `tx.getRepository(Entity)`), so services never hold the DataSource.
 */
@Injectable()
export class Transactions {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  run<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /**
   * Like run, in a transaction marked as the service's own change of the registry tables (contract
   * 18; service-change-mark.ts): every transaction that writes TenantRegistry, RoleRegistry,
   * RoleRegistryPermission, UserRegistry or UserRegistryApiKey runs here, and records its own
   * AdminChange row (or, for sign-in bookkeeping, none).
   */
  runChange<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (tx) => {
      await tx.query(MARK_SERVICE_CHANGE_SQL);
      return work(tx);
    });
  }

  /**
   * A registry change made by compare-and-set (database/recorded-change.ts): `attempt(null)` reads the row
   * with plain statements, checks the caller's right, and changes and records it in one statement that
   * changes nothing (answer MISSED) when what the checks relied on changed since (decision 0037). After
   * COMPARE_AND_SET_ATTEMPTS such misses it is attempted once more as `attempt(tx)` in a runChange
   * transaction, where it reads the row under its lock (SELECT … FOR UPDATE) and so cannot miss. A
   * change nobody races therefore costs the round trips of the change alone.
   */
  async compareAndSet<T>(attempt: (tx: EntityManager | null) => Promise<T | typeof MISSED>): Promise<T> {
    for (let i = 0; i < COMPARE_AND_SET_ATTEMPTS; i++) {
      const result = await attempt(null);
      if (result !== MISSED) return result;
    }
    return this.runChange(async (tx) => {
      const result = await attempt(tx);
      // Under the row lock nothing can change the row between the read and the write.
      if (result === MISSED) throw new Error('a change missed its row under the row lock');
      return result;
    });
  }

  /**
   * Like runChange, under a transaction-scoped PostgreSQL advisory lock: two nodes doing the same one-time
   * work (the seed) do it one after the other. The lock has no ORM form.
   */
  runLocked<T>(lockKey: number, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (tx) => {
      await tx.query(MARK_SERVICE_CHANGE_SQL);
      await tx.query('SELECT pg_advisory_xact_lock($1)', [lockKey]);
      return work(tx);
    });
  }
}

