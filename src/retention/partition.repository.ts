import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { withoutDeadlines } from '../database/deadlines';
import { defaultPartitionName, ExistingPartition, ident, PARTITION_KEY, PartitionedTable, PlannedPartition, periodStart } from './partition-plan';
import { columnsOf, createPartition, defaultHasRows, listPartitions, recomputeRollup, Sql } from './partition-sql';
import { PgErrorCode, pgErrorCode } from '../common/errors';

/** Key of the advisory lock that lets one node at a time change partitions. */
const PARTITION_LOCK_KEY = 7_206_310_452;
/**
 * How long one DDL statement may wait for its lock on a parent table. While it waits, inserts and
 * reads queue behind it, so it gives up soon and tries again (a long CSV export holds its lock for as
 * long as it streams).
 */
export const LOCK_TIMEOUT_MS = 500;
/** Tries of one short DDL transaction before this run leaves it to the next one. */
const LOCK_ATTEMPTS = 40;
const LOCK_PAUSE_MS = 250;

/**
 * The statements of partition maintenance (contract 16): the catalog read, partition creation, moving
 * rows out of DEFAULT, and detach-and-drop. Hand-written SQL because none of it has an ORM form. Every
 * statement runs on one connection of the job's own, without the request deadlines (moving rows or
 * counting a partition may take longer than a request may), each DDL transaction bounded by
 * lock_timeout instead.
 */
@Injectable()
export class PartitionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` on one connection holding the cluster-wide partition lock, or answers null at once
   * when another node holds it (that node is doing the same work).
   */
  async exclusively<T>(work: (session: PartitionSession) => Promise<T>): Promise<T | null> {
    const runner = this.dataSource.createQueryRunner();
    const connection: unknown = await runner.connect();
    try {
      return await withoutDeadlines(connection, (text) => runner.query(text), async () => {
        const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [PARTITION_LOCK_KEY])) as { locked: boolean }[];
        if (!locked) return null;
        try {
          return await work(new PartitionSession(runner));
        } finally {
          await runner.query('SELECT pg_advisory_unlock($1)', [PARTITION_LOCK_KEY]);
        }
      });
    } finally {
      await runner.release();
    }
  }

  /**
   * Runs read-only `work` (the catalog, a partition's last leaf) on a pooled connection, with the
   * request deadlines and without the partition lock: what a page asks while a run may be under way.
   */
  async reading<T>(work: (session: PartitionSession) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await work(new PartitionSession(runner));
    } finally {
      await runner.release();
    }
  }
}

/** The partition statements on the job's connection. */
export class PartitionSession {
  private readonly sql: Sql;

  constructor(private readonly runner: QueryRunner) {
    this.sql = (text, params) => runner.query(text, params);
  }

  list(tables: readonly PartitionedTable[]): Promise<Map<string, ExistingPartition[]>> {
    return listPartitions(
      this.sql,
      tables.map((t) => t.table),
    );
  }

  defaultHasRows(table: PartitionedTable): Promise<boolean> {
    return defaultHasRows(this.sql, table);
  }

  /** Creates one period partition, or DEFAULT (ATTACH: inserts and reads go on meanwhile). */
  async create(table: PartitionedTable, partition: PlannedPartition | 'default'): Promise<void> {
    await this.shortTransaction(() => createPartition(this.sql, table, partition));
  }

  /** Exact row count of one partition (for AuditRetentionRun.RowCount). */
  /** The highest leaf index of the partition's rows (null when none is sealed): what a sink must have acknowledged before the drop (contract 19). */
  async lastLeaf(table: string, partition: string): Promise<number | null> {
    const [{ last }] = (await this.sql(
      `SELECT max(l."LeafIndex")::float8 AS last FROM ${ident(partition)} p JOIN "AuditLeaf" l ON l."TableName" = $1 AND l."RowId" = p."Id"`,
      [table],
    )) as { last: number | null }[];
    return last;
  }

  async count(partition: string): Promise<number> {
    const [{ count }] = (await this.sql(`SELECT count(*)::bigint AS count FROM ${ident(partition)}`)) as { count: string }[];
    return Number(count);
  }

  /**
   * Moves every row of DEFAULT into a partition of its period, without a DELETE and keeping each row
   * as it is (same Id, same CreatedDate, every column): PostgreSQL refuses to create a partition while
   * DEFAULT holds rows of its range, so, in one transaction, DEFAULT is detached and replaced by an
   * empty one, the partitions its rows need are created, its rows are inserted through the parent
   * (routed to them), and the old DEFAULT is dropped whole. Readers see the rows before or after,
   * never missing nor twice. The moved rows are inserted with the new partitions' user triggers
   * disabled inside this transaction (nobody else can see those partitions yet): they are not new
   * rows, so nothing that reacts to an insert (the audit sealer's pending row) runs for them a second
   * time, and their SearchText is carried over as it was. The parent is locked for the length of the
   * move; DEFAULT holds only the rare rows dated where no partition was (a replay, a skewed clock).
   * Answers the partitions created and the number of rows moved.
   */
  async moveDefaultRows(table: PartitionedTable, plan: (dates: Date[]) => PlannedPartition[]): Promise<{ created: PlannedPartition[]; rows: number }> {
    const parent = ident(table.table);
    const name = defaultPartitionName(table);
    const moving = `${table.table}_moving`;
    return this.shortTransaction(async () => {
      await this.sql(`ALTER TABLE ${parent} DETACH PARTITION ${ident(name)}`);
      await this.sql(`ALTER TABLE ${ident(name)} RENAME TO ${ident(moving)}`);
      await createPartition(this.sql, table, 'default');
      const unit = table.period === 'day' ? 'day' : 'month';
      const periods = (await this.sql(
        `SELECT DISTINCT date_trunc('${unit}', "${PARTITION_KEY}" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS start FROM ${ident(moving)}`,
      )) as { start: Date }[];
      const created = plan(periods.map((p) => periodStart(table.period, new Date(p.start))));
      for (const partition of created) {
        await createPartition(this.sql, table, partition);
        await this.sql(`ALTER TABLE ${ident(partition.name)} DISABLE TRIGGER USER`);
      }
      const columns = (await columnsOf(this.sql, table.table)).map((c) => `"${c}"`).join(', ');
      const [{ rows }] = (await this.sql(
        `WITH moved AS (INSERT INTO ${parent} (${columns}) SELECT ${columns} FROM ${ident(moving)} ORDER BY "Id" RETURNING 1)
         SELECT count(*)::bigint AS rows FROM moved`,
      )) as { rows: string }[];
      for (const partition of created) await this.sql(`ALTER TABLE ${ident(partition.name)} ENABLE TRIGGER USER`);
      await this.sql(`DROP TABLE ${ident(moving)}`);
      // The parent's statement trigger counted the moved rows into a rollup a second time: their periods again from the rows.
      for (const partition of created) await recomputeRollup(this.sql, table.table, partition.from, partition.to);
      return { created, rows: Number(rows) };
    });
  }

  /**
   * Detaches one partition and drops it, in one short transaction: the parent's ACCESS EXCLUSIVE lock
   * lasts a catalog change and an unlink, whatever the partition holds. Not CONCURRENTLY: PostgreSQL
   * refuses DETACH … CONCURRENTLY on a table that has a DEFAULT partition, and DEFAULT is what keeps
   * a row dated outside every partition from being refused; lock_timeout and retries stand in for it.
   */
  async detachAndDrop(table: PartitionedTable, partition: ExistingPartition): Promise<void> {
    await this.shortTransaction(async () => {
      await this.sql(`ALTER TABLE ${ident(table.table)} DETACH PARTITION ${ident(partition.name)}`);
      await this.sql(`DROP TABLE ${ident(partition.name)}`);
      // A drop fires no DELETE trigger: a rollup of the table forgets the period with it.
      await recomputeRollup(this.sql, table.table, partition.from, partition.to!);
    });
  }

  /**
   * One transaction whose every lock wait is bounded by lock_timeout; tried again after a pause when a
   * lock was not granted in time, so a long reader delays the job, never the sign-ins queued behind it.
   */
  private async shortTransaction<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      await this.runner.startTransaction();
      try {
        await this.sql(`SET LOCAL lock_timeout = '${LOCK_TIMEOUT_MS}ms'`);
        const result = await work();
        await this.runner.commitTransaction();
        return result;
      } catch (error) {
        await this.runner.rollbackTransaction();
        if (pgErrorCode(error) !== PgErrorCode.LockNotAvailable || attempt >= LOCK_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, LOCK_PAUSE_MS));
      }
    }
  }
}
