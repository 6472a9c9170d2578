import type { EntityManager, EntityMetadata } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { SERVICE_CHANGE_CONDITION } from './service-change-mark';

/**
 * A registry change and its AdminChange row (contract 18) as ONE statement in autocommit: a data-
 * modifying CTE that changes the row (UPDATE or INSERT … RETURNING), inserts the AdminChange row from
 * what it returned, and answers the row after. One implicit transaction, so both commit or neither;
 * the mark of the service's own change (SERVICE_CHANGE_CONDITION) is evaluated while the statement
 * qualifies its row, before the registry's AFTER row trigger fires at the statement's end, so the
 * trigger never records the service's change a second time; an UPDATE that qualifies no row fires no
 * trigger and inserts no AdminChange row (the INSERT selects from what the UPDATE returned).
 *
 * What it buys (bench/RESULTS.md, "Registry writes in one statement"): a change costs one round trip
 * after its read instead of seven (BEGIN, mark, SELECT … FOR UPDATE, UPDATE, SELECT after, INSERT,
 * COMMIT), and no ORM statement building: 0.8-1.2x the time of the build before AdminChange, against
 * 1.5-2.0x. The "before" stays exact without a lock: the UPDATE changes the row only while the values
 * read before it (the `expected` ones) are still its values (compare-and-set); when a concurrent change
 * got there first it changes nothing, and the change is made again under the row lock
 * (Transactions.compareAndSet).
 *
 * The statements are generated from the tables' TypeORM metadata (columns, types; the API names are
 * the entities' property names), built once per shape and kept: no registry route writes SQL by hand
 * for its change and its record.
 */

/** How a SET member is written: `value` replaces the column; `unless-set` only fills it when it is null (a lock date kept). */
export type SetForm = 'value' | 'unless-set';

/** One member of the change: the entity property, its new value, how it is written. */
export interface SetMember {
  field: string;
  value: unknown;
  form?: SetForm;
}

/** The AdminChange row by the AdminChange entity's property names (already bounded by the recorder). */
export type RecordRow = Readonly<Record<string, unknown>>;

/** Members of the recorded row taken from the changed row rather than given (a created row's new Id). */
export type FromRow = Readonly<Partial<Record<string, string>>>;

const ADMIN_CHANGE = 'AdminChange';
/** At most this many statement shapes are kept per table (a table has few: one per set of members a route changes). */
const SHAPES_MAX = 256;

/** The statements of one registry table, generated from its metadata and AdminChange's. */
export class RecordedChanges<Row> {
  private readonly shapes = new Map<string, string>();
  private readonly selected: string;
  private readonly idColumn: ColumnMetadata;

  /**
   * `live`: a condition every changed row must meet besides the compared values (UserRegistry: not
   * deleted). Hand-written by the table's repository, without parameters.
   */
  constructor(
    private readonly table: EntityMetadata,
    private readonly options: { live?: string } = {},
  ) {
    const primary = table.primaryColumns;
    if (primary.length !== 1) throw new Error(`${table.tableName}: a recorded change needs one primary column`);
    this.idColumn = primary[0];
    // The row after, by property name; a column not selected by default (a password hash) stays unread.
    this.selected = table.columns
      .filter((column) => column.isSelect)
      .map((column) => `changed.${quote(column.databaseName)} AS ${quote(column.propertyName)}`)
      .join(', ');
  }

  /**
   * Changes row `id` from `expected` (the values it was read with, by property) to `set`, recording
   * `record` (null: the change is not recorded, e.g. it changes nothing Changes names) in the same
   * statement. The row after, or null when no row had the expected values (gone, or changed since).
   */
  async update(
    manager: EntityManager,
    change: { id: number; set: readonly SetMember[]; expected: Readonly<Record<string, unknown>>; record: RecordRow | null; fromRow?: FromRow },
  ): Promise<Row | null> {
    const expected = Object.keys(change.expected);
    const key = `U|${change.set.map((m) => `${m.field}:${m.form ?? 'value'}`).join(',')}|${expected.join(',')}|${this.recordKey(manager, change.record, change.fromRow)}`;
    const sql = this.shape(key, () => {
      const params = new Params();
      const id = params.add(this.idColumn, manager);
      const assignments = change.set.map((member) => {
        const column = this.column(member.field);
        const value = params.add(column, manager);
        return `${quote(column.databaseName)} = ${member.form === 'unless-set' ? `COALESCE(${quote(column.databaseName)}, ${value})` : value}`;
      });
      const compared = expected.map((field) => {
        const column = this.column(field);
        return `${quote(column.databaseName)} IS NOT DISTINCT FROM ${params.add(column, manager)}`;
      });
      const where = [`${quote(this.idColumn.databaseName)} = ${id}`, ...compared, ...(this.options.live ? [this.options.live] : []), SERVICE_CHANGE_CONDITION];
      const changed = `UPDATE ${quote(this.table.tableName)} SET ${assignments.join(', ')} WHERE ${where.join(' AND ')} RETURNING *`;
      return this.statement(changed, params, manager, change.record, change.fromRow);
    });
    const values = [change.id, ...change.set.map((m) => m.value), ...expected.map((field) => change.expected[field]), ...this.recordValues(manager, change.record, change.fromRow)];
    const rows = await manager.query<Row[]>(sql, values);
    return rows[0] ?? null;
  }

  /** Inserts `values` (by property) and records `record` in the same statement; the row created. */
  async insert(manager: EntityManager, change: { values: Readonly<Record<string, unknown>>; record: RecordRow; fromRow?: FromRow }): Promise<Row> {
    const fields = Object.keys(change.values);
    const key = `I|${fields.join(',')}|${this.recordKey(manager, change.record, change.fromRow)}`;
    const sql = this.shape(key, () => {
      const params = new Params();
      const columns = fields.map((field) => this.column(field));
      const values = columns.map((column) => params.add(column, manager));
      // The mark as the SELECT's condition: evaluated before the row exists, so before any trigger fires.
      const changed = `INSERT INTO ${quote(this.table.tableName)} (${columns.map((c) => quote(c.databaseName)).join(', ')}) SELECT ${values.join(', ')} WHERE ${SERVICE_CHANGE_CONDITION} RETURNING *`;
      return this.statement(changed, params, manager, change.record, change.fromRow);
    });
    const rows = await manager.query<Row[]>(sql, [...fields.map((field) => change.values[field]), ...this.recordValues(manager, change.record, change.fromRow)]);
    return rows[0];
  }

  private statement(changed: string, params: Params, manager: EntityManager, record: RecordRow | null, fromRow: FromRow | undefined): string {
    const parts = [`changed AS (${changed})`];
    if (record) {
      const adminChange = manager.connection.getMetadata(ADMIN_CHANGE);
      const columns = recordedColumns(adminChange, record);
      const values = columns.map((column) => {
        const source = fromRow?.[column.propertyName];
        return source ? `changed.${quote(this.column(source).databaseName)}` : params.add(column, manager);
      });
      parts.push(`recorded AS (INSERT INTO ${quote(adminChange.tableName)} (${columns.map((c) => quote(c.databaseName)).join(', ')}) SELECT ${values.join(', ')} FROM changed)`);
    }
    return `WITH ${parts.join(', ')} SELECT ${this.selected} FROM changed`;
  }

  private recordKey(manager: EntityManager, record: RecordRow | null, fromRow: FromRow | undefined): string {
    if (!record) return '-';
    return `${recordedColumns(manager.connection.getMetadata(ADMIN_CHANGE), record).map((c) => c.propertyName).join(',')}|${JSON.stringify(fromRow ?? {})}`;
  }

  private recordValues(manager: EntityManager, record: RecordRow | null, fromRow: FromRow | undefined): unknown[] {
    if (!record) return [];
    return recordedColumns(manager.connection.getMetadata(ADMIN_CHANGE), record)
      .filter((column) => !fromRow?.[column.propertyName])
      .map((column) => record[column.propertyName]);
  }

  private column(field: string): ColumnMetadata {
    const column = this.table.findColumnWithPropertyName(field);
    if (!column) throw new Error(`${this.table.tableName} has no column for ${field}`);
    return column;
  }

  private shape(key: string, build: () => string): string {
    let sql = this.shapes.get(key);
    if (sql === undefined) {
      sql = build();
      if (this.shapes.size >= SHAPES_MAX) this.shapes.clear();
      this.shapes.set(key, sql);
    }
    return sql;
  }
}

/** The AdminChange columns a recorded row writes, in the entity's order (its generated Id and what is not inserted aside). */
function recordedColumns(adminChange: EntityMetadata, record: RecordRow): ColumnMetadata[] {
  return adminChange.columns.filter((column) => column.isInsert && !column.isGenerated && column.propertyName in record);
}

/** Numbered parameters, each cast to its column's type (a parameter in a SELECT list has no type of its own). */
class Params {
  private count = 0;

  add(column: ColumnMetadata, manager: EntityManager): string {
    this.count += 1;
    const type = manager.connection.driver.normalizeType(column);
    // Never with a length: an explicit cast to varchar(n) or char(n) cuts a longer value silently, where
    // the column's own assignment refuses it (22001); bpchar is char without one.
    return `$${this.count}::${type === 'character' ? 'bpchar' : type}`;
  }
}

function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
