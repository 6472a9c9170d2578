import { EntityManager, ObjectLiteral, Repository } from 'typeorm';

/** Per entity property, the value of every row to insert, in row order (all arrays of one length). */
export type ColumnArrays<T, K extends keyof T> = { [P in K]: unknown[] };

/** Values written alike on every row of one insert (e.g. the flush's CreatedDate and Instance). */
export type RowStamp<T, S extends keyof T> = { [P in S]: unknown };

/**
 * A many-row INSERT for one table, as `INSERT … SELECT FROM unnest($1::type[], $2::type[], …)`: one
 * bound parameter per column instead of one per value, so its size never nears PostgreSQL's 65535
 * parameters and the driver serialises a few arrays instead of tens of thousands of values. The
 * statement is built once from the entity's metadata (table, column names and types), never from
 * input. Measured: a flush of 20000 ArchiverWarning rows in one transaction takes ≈ 316 ms
 * (bench/reads.js, bench/RESULTS.md issue 4; goal ≤ 500 ms).
 */
export class BulkInsert<T extends ObjectLiteral, K extends keyof T & string, S extends keyof T & string = never> {
  readonly tableName: string;
  private readonly sql: string;

  constructor(
    repository: Repository<T>,
    private readonly columns: readonly K[],
    private readonly stamped: readonly S[] = [],
  ) {
    const { metadata } = repository;
    const driver = repository.manager.connection.driver;
    const column = (property: string) => {
      const found = metadata.findColumnWithPropertyName(property);
      if (!found) throw new Error(`${metadata.name} has no column ${property}`);
      return { name: driver.escape(found.databaseName), type: driver.normalizeType(found) };
    };
    const arrays = columns.map(column);
    const constants = stamped.map(column);
    const n = arrays.length;
    this.tableName = metadata.tableName;
    this.sql =
      `INSERT INTO ${driver.escape(metadata.tableName)} (${[...arrays, ...constants].map((c) => c.name).join(', ')}) ` +
      `SELECT *${constants.map((c, i) => `, $${n + i + 1}::${c.type}`).join('')} ` +
      `FROM unnest(${arrays.map((c, i) => `$${i + 1}::${c.type}[]`).join(', ')})`;
  }

  /** Inserts the rows inside transaction `tx`; the number of rows (nothing is sent for none). */
  async insert(tx: EntityManager, values: ColumnArrays<T, K>, stamp: RowStamp<T, S>): Promise<number> {
    const rows = values[this.columns[0]].length;
    if (rows === 0) return 0;
    await tx.query(this.sql, [...this.columns.map((c) => values[c]), ...this.stamped.map((s) => stamp[s])]);
    return rows;
  }
}

/** A table the capture flush writes: every row carries the flush's CreatedDate and the node's Instance. */
export interface FlushedRow {
  createdDate: Date;
  instance: string | null;
}

/**
 * Base of the repository of a table written by the capture flush: its one query is the bulk insert
 * of a flush's rows, inside the flush's transaction. Reads of these tables go through the read
 * engine (reads/).
 */
export abstract class FlushedTableRepository<T extends FlushedRow, K extends keyof T & string> {
  private readonly bulk: BulkInsert<T, K, 'createdDate' | 'instance'>;

  protected constructor(repository: Repository<T>, columns: readonly K[]) {
    this.bulk = new BulkInsert<T, K, 'createdDate' | 'instance'>(repository, columns, ['createdDate', 'instance']);
  }

  /**
   * The repository of a flushed table whose only query is that insert, over these columns: one generic
   * class for every telemetry table the flush fills (telemetry/capture-rows.ts), no copy per table.
   */
  static of<T extends FlushedRow>(repository: Repository<T>, columns: readonly (keyof T & string)[]): FlushedTableRepository<T, keyof T & string> {
    return new (class extends FlushedTableRepository<T, keyof T & string> {})(repository, columns);
  }

  get tableName(): string {
    return this.bulk.tableName;
  }

  /** Inserts one flush's rows (column by column) in one statement; the number of rows. */
  insertMany(tx: EntityManager, values: ColumnArrays<T, K>, stamp: FlushedRow): Promise<number> {
    return this.bulk.insert(tx, values, stamp as RowStamp<T, 'createdDate' | 'instance'>);
  }
}
