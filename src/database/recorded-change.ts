import type { PoolClient } from 'pg';
import type { EntityManager, EntityMetadata } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { byCodePoint, CHANGES_MAX } from '../common/changes-format';
import { SERVICE_CHANGE_CONDITION } from './service-change-mark';
import { statementName } from './statement-name';

/**
 * A registry change and its AdminChange row (contract 18) as ONE statement in autocommit, one implicit
 * transaction, so both commit or neither (docs/decisions/0037).
 *
 * A member change (`change`) changes the row and records it:
 * `WITH changed AS (UPDATE … WHERE … AND <keep the before> RETURNING *, <Changes>),
 * recorded AS (INSERT INTO "AdminChange" … SELECT … FROM changed WHERE <Changes> <> '{}') SELECT … FROM changed`.
 * The Changes text is rendered IN SQL from the row the UPDATE qualified under its row lock (before: kept
 * in a transaction-local setting while it qualifies; a row a concurrent change moved is qualified again
 * in its newest version) and the updated one (after), byte for
 * byte as admin-changes/changes.ts changesText renders it (`renderedSql`), so the "before" is what the
 * change replaced however many writers change the row at once: the members being set are not
 * compared, only those the caller's checks relied on (`compared`: a user's role, a tenant's landlord),
 * and a concurrent change of those is the only miss. A change that changes nothing Changes names (a
 * concurrent writer set the same value first) writes no AdminChange row and answers the row as it is.
 * A creation (`insert`) is `INSERT … SELECT $… WHERE <mark> RETURNING *` with its row, whose Changes the
 * service renders (nothing to lock).
 *
 * The mark of the service's own change (SERVICE_CHANGE_CONDITION) is a condition of the UPDATE's (or
 * the INSERT's SELECT's) WHERE: evaluated while the statement qualifies its row, before the registry's
 * AFTER row trigger fires at the statement's end, so the trigger never records the service's change a
 * second time; an UPDATE that qualifies no row fires no trigger and inserts no AdminChange row.
 *
 * What it buys (bench/RESULTS.md, "Registry writes under one row lock"): a change costs one round trip
 * after its read (no BEGIN, SELECT … FOR UPDATE, COMMIT of a transaction), and with several writers on
 * one row no statement misses and none is repeated under a lock.
 *
 * The statements are generated from the tables' TypeORM metadata (columns, types; the API names are
 * the entities' property names), built once per shape and kept: no registry route writes SQL by hand
 * for its change, its Changes text and its record.
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

/** The AdminChange property a member change fills with the Changes text it renders. */
const CHANGES = 'changes';

/** Members of the recorded row taken from the changed row rather than given (a created row's new Id). */
export type FromRow = Readonly<Partial<Record<string, string>>>;

const ADMIN_CHANGE = 'AdminChange';
/** At most this many statement shapes are kept per table (a table has few: one per set of members a route changes). */
const SHAPES_MAX = 256;

/** The statements of one registry table, generated from its metadata and AdminChange's. */
export class RecordedChanges<Row> {
  private readonly shapes = new Map<string, Statement>();
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
   * Locks row `id` (when it is live and still has the `compared` values the caller's checks relied on),
   * sets `set`, and records `record` (the AdminChange row by property, without its Changes) with the
   * Changes text of the members `recorded` (API names) rendered from the row locked and the row after;
   * no AdminChange row when that text is `{}`. The row after, or null when no row was live with the
   * compared values (gone, or changed since).
   */
  async change(
    manager: EntityManager,
    change: {
      id: number;
      set: readonly SetMember[];
      compared: Readonly<Record<string, unknown>>;
      recorded: readonly string[];
      record: RecordRow;
      fromRow?: FromRow;
      /** 'changed': the caller only needs to know whether the row was changed (its columns are not read back). */
      answer?: 'row' | 'changed';
    },
  ): Promise<Row | null> {
    const compared = Object.keys(change.compared);
    const record = withoutChanges(change.record);
    const answer = change.answer ?? 'row';
    const key = `C|${answer}|${change.set.map((m) => `${m.field}:${m.form ?? 'value'}`).join(',')}|${compared.join(',')}|${change.recorded.join(',')}|${this.recordKey(manager, record, change.fromRow)}`;
    const sql = this.shape(key, () => {
      const params = new Params();
      const id = params.add(this.idColumn, manager);
      const assignments = change.set.map((member) => {
        const column = this.column(member.field);
        const value = params.add(column, manager);
        return `${quote(column.databaseName)} = ${member.form === 'unless-set' ? `COALESCE(t.${quote(column.databaseName)}, ${value})` : value}`;
      });
      const checks = compared.map((field) => {
        const column = this.column(field);
        return `${quote(column.databaseName)} IS NOT DISTINCT FROM ${params.add(column, manager)}`;
      });
      // The members Changes names, in its key order (fixed per shape): before, as the row the UPDATE
      // qualifies renders them, kept in a transaction-local setting while it qualifies (the values the
      // change replaces: on a row a concurrent change moved, PostgreSQL qualifies the newest version
      // again, under the row lock); after, from the row RETURNING answers.
      const members = [...change.recorded].sort(byCodePoint).map((field, i) => ({ field, column: this.column(field), i }));
      const idName = quote(this.idColumn.databaseName);
      const columnOf = (m: { column: ColumnMetadata }) => `t.${quote(m.column.databaseName)}`;
      const kept = `json_build_array(${members.map((m) => renderedSql(manager.connection.driver.normalizeType(m.column), columnOf(m), m.column)).join(', ')})::text`;
      // CASE: kept only for the row changed, whatever order the quals run in and whatever rows a scan reads.
      const keep = `CASE WHEN t.${idName} = ${id} THEN set_config('${BEFORE_SETTING}', ${kept}, true) IS NOT NULL ELSE false END`;
      const where = [`t.${idName} = ${id}`, ...(this.options.live ? [this.options.live] : []), ...checks, SERVICE_CHANGE_CONDITION, keep];
      const text = changesSql(
        members.map((m) => ({ key: m.field, column: m.column, before: `(current_setting('${BEFORE_SETTING}')::json ->> ${m.i})`, after: columnOf(m) })),
        manager,
      );
      const changed = `UPDATE ${quote(this.table.tableName)} AS t SET ${assignments.join(', ')} WHERE ${where.join(' AND ')} RETURNING t.*, ${text} AS ${quote(RENDERED)}`;
      return this.statement(changed, params, manager, record, change.fromRow, true, answer === 'changed' ? `1 AS "changed"` : undefined);
    });
    const values = [change.id, ...change.set.map((m) => m.value), ...compared.map((field) => change.compared[field]), ...this.recordValues(manager, record, change.fromRow)];
    const rows = await run<Row>(manager, sql, values);
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
    const rows = await run<Row>(manager, sql, [...fields.map((field) => change.values[field]), ...this.recordValues(manager, change.record, change.fromRow)]);
    return rows[0];
  }

  /**
   * `WITH changed AS (…), recorded AS (INSERT INTO "AdminChange" …) SELECT <the row> FROM changed`.
   * With `renders` (a member change) the Changes column comes from the text `changed` rendered, and no row
   * is recorded when it is `{}`.
   */
  private statement(changed: string, params: Params, manager: EntityManager, record: RecordRow | null, fromRow: FromRow | undefined, renders = false, answered = this.selected): string {
    const parts = [`changed AS (${changed})`];
    if (record) {
      const adminChange = manager.connection.getMetadata(ADMIN_CHANGE);
      const columns = recordedColumns(adminChange, record);
      const values = columns.map((column) => {
        const source = fromRow?.[column.propertyName];
        return source ? `changed.${quote(this.column(source).databaseName)}` : params.add(column, manager);
      });
      const rendered = renders ? adminChange.findColumnWithPropertyName(CHANGES) : undefined;
      if (renders && !rendered) throw new Error(`${adminChange.tableName} has no column for ${CHANGES}`);
      const names = [...columns, ...(rendered ? [rendered] : [])].map((c) => quote(c.databaseName));
      const select = rendered
        ? `SELECT ${[...values, `changed.${quote(RENDERED)}`].join(', ')} FROM changed WHERE changed.${quote(RENDERED)} <> '{}'`
        : `SELECT ${values.join(', ')} FROM changed`;
      parts.push(`recorded AS (INSERT INTO ${quote(adminChange.tableName)} (${names.join(', ')}) ${select})`);
    }
    return `WITH ${parts.join(', ')} SELECT ${answered} FROM changed`;
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

  private shape(key: string, build: () => string): Statement {
    let statement = this.shapes.get(key);
    if (statement === undefined) {
      const text = build();
      statement = { text, name: statementName('tm-recorded', text) };
      if (this.shapes.size >= SHAPES_MAX) this.shapes.clear();
      this.shapes.set(key, statement);
    }
    return statement;
  }
}

/** A generated statement and the name it is prepared under. */
interface Statement {
  text: string;
  name: string;
}

/**
 * Runs `statement`: inside a transaction (the locking fallback) on its connection; otherwise as a named
 * prepared statement on a connection from the driver's pool (PostgresDriver.obtainMasterConnection, as
 * UserRegistryRepository.readForGuard does), so PostgreSQL parses each shape once per connection rather
 * than on every write (bench/RESULTS.md, "Registry writes under one row lock").
 */
async function run<Row>(manager: EntityManager, statement: Statement, values: unknown[]): Promise<Row[]> {
  if (manager.queryRunner) return manager.query<Row[]>(statement.text, values);
  const driver = manager.connection.driver as PostgresDriver;
  const [client, release] = (await driver.obtainMasterConnection()) as [PoolClient, (error?: unknown) => void];
  let failure: unknown;
  // As pg's own Pool.query does: an error event while the connection is out must not go unheard.
  const onError = (error: unknown) => (failure = error);
  client.on('error', onError);
  try {
    return (await client.query({ name: statement.name, text: statement.text, values })).rows as Row[];
  } catch (error) {
    // A statement error (a duplicate name) leaves the connection usable; anything else discards it.
    if (!(error instanceof Error && 'code' in error && typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code))) failure = error;
    throw error;
  } finally {
    client.removeListener('error', onError);
    release(failure);
  }
}

/** The record of a member change without its Changes, which the statement renders. */
function withoutChanges(record: RecordRow): RecordRow {
  const rest: Record<string, unknown> = { ...record };
  delete rest[CHANGES];
  return rest;
}

/** The column of `changed` holding the rendered Changes text (not a column of any table). */
const RENDERED = 'Changes:rendered';

/** One member of a Changes text rendered in SQL: its key (API name), its column, the SQL of its rendered value before and of its value after. */
interface RenderedMember {
  key: string;
  column: ColumnMetadata;
  /** SQL of the before value already rendered (kept as the row qualified); `after` is SQL of the value itself. */
  before: string;
  after: string;
}

/** The transaction-local setting that keeps a member change's before values, rendered, from its WHERE to its RETURNING. */
const BEFORE_SETTING = 'app.admin_change_before';

/**
 * The SQL of the Changes text of `members` (already in key order): `{"key":[before,after],…}` with a
 * member written only when its rendered before and after differ, exactly as changesText (admin-
 * changes/changes.ts) writes it. Refused at generation for a shape whose text could exceed CHANGES_MAX
 * (changesText would cut it; this does not).
 */
function changesSql(members: readonly RenderedMember[], manager: EntityManager): string {
  let longest = 2 + Math.max(0, members.length - 1);
  const pieces = members.map((member) => {
    const type = manager.connection.driver.normalizeType(member.column);
    const before = member.before;
    const after = renderedSql(type, member.after, member.column);
    const key = JSON.stringify(member.key);
    longest += Array.from(key).length + 4 + 2 * renderedLongest(type, member.column);
    return `CASE WHEN ${before} <> ${after} THEN ${literal(`${key}:[`)} || ${before} || ',' || ${after} || ']' END`;
  });
  if (longest > CHANGES_MAX) throw new Error(`a Changes text of ${members.map((m) => m.key).join(', ')} could exceed ${CHANGES_MAX} characters`);
  // concat_ws skips the members that did not change (NULL); none: '{}'.
  return pieces.length === 0 ? `'{}'` : `'{' || concat_ws(',', ${pieces.join(', ')}) || '}'`;
}

/**
 * The SQL of `value` (of column type `type`) as changesText's render writes it (JSON.stringify), never
 * NULL: a SQL null is `null`. Text: to_json, which escapes as JSON.stringify does (quote, backslash,
 * \b \f \n \r \t, other controls as \u00xx in lowercase; everything else, U+2028 included, as it is);
 * a boolean or an integer: its text; a timestamptz: toISOString's form (UTC, milliseconds truncated as a
 * Date read from PostgreSQL holds them, Z). Any other type is refused at generation, not rendered apart.
 */
function renderedSql(type: string, value: string, column: ColumnMetadata): string {
  switch (type) {
    case 'character varying':
    case 'character':
    case 'text':
      return `COALESCE(to_json(${value})::text, 'null')`;
    case 'boolean':
    case 'integer':
    case 'smallint':
      return `COALESCE((${value})::text, 'null')`;
    case 'timestamp with time zone':
      return `COALESCE('"' || to_char((${value}) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '"', 'null')`;
    default:
      throw new Error(`${column.entityMetadata.tableName}.${column.databaseName}: a ${type} member is not rendered in SQL`);
  }
}

/** The longest rendering of a member of `type`, in characters (a text's every character at worst \u00xx). */
function renderedLongest(type: string, column: ColumnMetadata): number {
  switch (type) {
    case 'character varying':
    case 'character': {
      const length = Number(column.length);
      if (!length) throw new Error(`${column.entityMetadata.tableName}.${column.databaseName}: a text member without a length is not rendered in SQL`);
      return 2 + 6 * length;
    }
    case 'boolean':
      return 5;
    case 'integer':
      return 11;
    case 'smallint':
      return 6;
    case 'timestamp with time zone':
      return 26;
    default:
      throw new Error(`${column.entityMetadata.tableName}.${column.databaseName}: a ${type} member is not rendered in SQL`);
  }
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
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

/** A name as a quoted SQL identifier (also the pinned search path's schema, search-path.ts). */
export function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
