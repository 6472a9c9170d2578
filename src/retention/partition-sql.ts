import {
  defaultPartitionName,
  ExistingPartition,
  ident,
  PARTITION_KEY,
  PARTITION_STORAGE,
  PartitionedTable,
  PlannedPartition,
  timestampLiteral,
} from './partition-plan';

/** Runs one statement on one connection (a QueryRunner's query); the rows it answers. */
export type Sql = (sql: string, params?: unknown[]) => Promise<any[]>;

/**
 * The statements on partitions, shared by the conversion migration and the retention job so both make
 * partitions the same way. Identifiers come from the fixed table list (partition-plan.ts); dates are
 * written as ISO literals because DDL takes no bound parameters.
 */

/** The partitions of each table, bounds read back from the catalog (MINVALUE as null). */
export async function listPartitions(sql: Sql, tables: readonly string[]): Promise<Map<string, ExistingPartition[]>> {
  const rows = (await sql(
    `SELECT parent.relname AS "table", child.relname AS name, b.bound = 'DEFAULT' AS "isDefault",
            CASE WHEN m[1] IS NULL OR m[1] = 'MINVALUE' THEN NULL ELSE btrim(m[1], '''')::timestamptz END AS "from",
            CASE WHEN m[2] IS NULL OR m[2] = 'MAXVALUE' THEN NULL ELSE btrim(m[2], '''')::timestamptz END AS "to"
       FROM pg_inherits i
       JOIN pg_class parent ON parent.oid = i.inhparent
       JOIN pg_class child ON child.oid = i.inhrelid
       JOIN pg_namespace n ON n.oid = parent.relnamespace
      CROSS JOIN LATERAL (SELECT pg_get_expr(child.relpartbound, child.oid) AS bound) b
      CROSS JOIN LATERAL (SELECT regexp_match(b.bound, '^FOR VALUES FROM \\((.*)\\) TO \\((.*)\\)$') AS m) r
      WHERE n.nspname = current_schema() AND parent.relname = ANY($1::text[]) AND parent.relkind = 'p'`,
    [tables],
  )) as { table: string; name: string; isDefault: boolean; from: Date | null; to: Date | null }[];
  const byTable = new Map<string, ExistingPartition[]>(tables.map((t) => [t, []]));
  for (const row of rows) byTable.get(row.table)?.push({ name: row.name, isDefault: row.isDefault, from: row.from, to: row.to });
  return byTable;
}

/** Whether `table` is already a partitioned table (the conversion ran). */
export async function isPartitioned(sql: Sql, table: string): Promise<boolean> {
  const rows = await sql(
    `SELECT c.relkind = 'p' AS partitioned FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname = $1`,
    [table],
  );
  return rows.length > 0 && rows[0].partitioned === true;
}

/** The function of the append-only refusal (contract 15, migration TamperEvidentAudit). */
export const APPEND_ONLY_FUNCTION = 'AuditAppendOnly';

/**
 * The append-only TRUNCATE refusal of `table` (a statement-level trigger) as CREATE TRIGGER text for
 * another table: PostgreSQL clones row triggers to every partition but not statement triggers, so a
 * TRUNCATE aimed at one partition would otherwise pass. Each partition gets its own copy. Other
 * statement triggers stay on the parent only: they fire for statements on the parent (the rollup's of
 * decision 0021, with transition tables that see every partition's rows), and a copy on a partition
 * would count its rows a second time or empty a whole rollup for one partition.
 */
export async function statementTriggersFor(sql: Sql, table: string, target: string): Promise<string[]> {
  const rows = (await sql(
    `SELECT pg_get_triggerdef(t.oid) AS def, format(' ON %I.%I ', n.nspname, c.relname) AS "on"
       FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_proc f ON f.oid = t.tgfoid
      WHERE n.nspname = current_schema() AND c.relname = $1 AND NOT t.tgisinternal AND (t.tgtype & 1) = 0
        AND f.proname = $2 AND t.tgnewtable IS NULL AND t.tgoldtable IS NULL
      ORDER BY t.tgname`,
    [table, APPEND_ONLY_FUNCTION],
  )) as { def: string; on: string }[];
  return rows.map((r) => {
    const at = r.def.indexOf(r.on);
    if (at < 0) throw new Error(`cannot copy trigger of ${table}: ${r.def}`);
    return `${r.def.slice(0, at)} ON ${ident(target)} ${r.def.slice(at + r.on.length)}`;
  });
}

/**
 * Makes one partition of `table` without blocking the table: a new empty table shaped like the parent
 * (no identity of its own: the parent's identity numbers every row), its range as a CHECK so ATTACH
 * need not scan it, then ATTACH, which takes only a SHARE UPDATE EXCLUSIVE lock on the parent (inserts
 * and reads go on; CREATE TABLE … PARTITION OF would take an ACCESS EXCLUSIVE one). ATTACH builds the
 * parent's indexes on the empty table and clones its row triggers; statement triggers are copied.
 * With DEFAULT holding rows of the range, PostgreSQL refuses: those rows are moved first (moveDefaultRows).
 */
export async function createPartition(sql: Sql, table: PartitionedTable, partition: PlannedPartition | 'default'): Promise<string> {
  const name = partition === 'default' ? defaultPartitionName(table) : partition.name;
  const parent = ident(table.table);
  await sql(`CREATE TABLE ${ident(name)} (LIKE ${parent} INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION) WITH (${PARTITION_STORAGE})`);
  if (partition === 'default') {
    await sql(`ALTER TABLE ${parent} ATTACH PARTITION ${ident(name)} DEFAULT`);
  } else {
    const from = timestampLiteral(partition.from);
    const to = timestampLiteral(partition.to);
    await sql(`ALTER TABLE ${ident(name)} ADD CONSTRAINT ${ident(`${name}_range`)} CHECK ("${PARTITION_KEY}" >= ${from} AND "${PARTITION_KEY}" < ${to})`);
    await sql(`ALTER TABLE ${parent} ATTACH PARTITION ${ident(name)} FOR VALUES FROM (${from}) TO (${to})`);
  }
  for (const trigger of await statementTriggersFor(sql, table.table, name)) await sql(trigger);
  return name;
}

/** Whether DEFAULT holds any row (one index or heap probe). */
export async function defaultHasRows(sql: Sql, table: PartitionedTable): Promise<boolean> {
  const rows = await sql(`SELECT EXISTS (SELECT 1 FROM ${ident(defaultPartitionName(table))}) AS "any"`);
  return rows[0]?.any === true;
}

/** The column names of `table` in order, for an INSERT … SELECT that names them. */
export async function columnsOf(sql: Sql, table: string): Promise<string[]> {
  const rows = (await sql(
    `SELECT a.attname AS name FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [table],
  )) as { name: string }[];
  return rows.map((r) => r.name);
}

/**
 * Recomputes the per-minute rollup of `table` over [from, to) where it has one (decision 0021: the
 * function `<table>Minute_Recompute(low, high)` beside it), after rows were moved or dropped without
 * its triggers seeing them as such: a drop fires no DELETE trigger, and a move re-inserts rows the
 * rollup already counted. `from` null (the legacy partition's MINVALUE) starts at 1970.
 */
export async function recomputeRollup(sql: Sql, table: string, from: Date | null, to: Date): Promise<void> {
  const fn = `${table}Minute_Recompute`;
  const [{ exists }] = await sql(`SELECT to_regprocedure($1) IS NOT NULL AS exists`, [`"${fn}"(timestamptz, timestamptz)`]);
  if (!exists) return;
  await sql(`SELECT ${ident(fn)}($1, $2)`, [from ?? new Date(0), to]);
}
