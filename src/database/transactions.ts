import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { MARK_SERVICE_CHANGE_SQL } from './service-change-mark';

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

