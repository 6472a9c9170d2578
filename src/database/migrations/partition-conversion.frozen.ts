import { QueryRunner } from 'typeorm';

/**
 * FROZEN (STYLE.md 15): the partition conversion exactly as migrations PartitionTelemetry and
 * PartitionAudit ran it when they were written, with its own copy of every helper, so that later
 * changes to src/retention (new tables, new partition rules) never change what an old migration does.
 * Imports nothing but TypeORM. Do not edit; a new rule is a new migration.
 */

/** A table to convert: its name and the period of its partitions. */
export interface FrozenPartitionedTable {
  table: string;
  period: 'day' | 'month';
}
type Period = FrozenPartitionedTable['period'];
type Sql = (sql: string, params?: unknown[]) => Promise<any[]>;

const PERIODS_AHEAD = 2;
const PARTITION_KEY = 'CreatedDate';
const PARTITION_STORAGE = 'autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0';
const APPEND_ONLY_FUNCTION = 'AuditAppendOnly';

function periodStart(period: Period, date: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
    : new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

function addPeriods(period: Period, start: Date, n: number): Date {
  return period === 'day'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + n))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function partitionName(table: FrozenPartitionedTable, start: Date): string {
  const stamp = `${pad(start.getUTCFullYear(), 4)}${pad(start.getUTCMonth() + 1)}${table.period === 'day' ? pad(start.getUTCDate()) : ''}`;
  return `${table.table}_p${stamp}`;
}

function defaultPartitionName(table: FrozenPartitionedTable): string {
  return `${table.table}_default`;
}

function legacyPartitionName(table: FrozenPartitionedTable): string {
  return `${table.table}_legacy`;
}

function legacyUpperBound(period: Period, now: Date, newest: Date | null): Date {
  const afterNext = addPeriods(period, periodStart(period, now), 2);
  if (!newest) return afterNext;
  const afterNewest = addPeriods(period, periodStart(period, newest), 1);
  return afterNewest.getTime() > afterNext.getTime() ? afterNewest : afterNext;
}

function timestampLiteral(date: Date): string {
  return `'${date.toISOString()}'::timestamptz`;
}

function ident(name: string): string {
  if (!/^[A-Za-z0-9_]{1,63}$/.test(name)) throw new Error(`not a partition-safe identifier: ${name}`);
  return `"${name}"`;
}

async function isPartitioned(sql: Sql, table: string): Promise<boolean> {
  const rows = await sql(
    `SELECT c.relkind = 'p' AS partitioned FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname = $1`,
    [table],
  );
  return rows.length > 0 && rows[0].partitioned === true;
}

/** The append-only TRUNCATE refusal of `table` as CREATE TRIGGER text for the partition `target`. */
async function statementTriggersFor(sql: Sql, table: string, target: string): Promise<string[]> {
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

/** One partition (or DEFAULT) of `table`, made as a plain table then ATTACHed (no lock that stops inserts). */
async function createPartition(sql: Sql, table: FrozenPartitionedTable, partition: { name: string; from: Date; to: Date } | 'default'): Promise<void> {
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
}

/**
 * Converts one plain table into a table partitioned by RANGE (CreatedDate) WITHOUT copying a row
 * (contract 16; docs/decisions/0020-retention-by-partition.md). For the migrations; `now` is the wall
 * clock (a migration runs before the service's Clock exists).
 *
 * Outside any transaction, while nodes on the previous version keep writing:
 *  1. a unique index (Id, CreatedDate), built CONCURRENTLY: a partitioned table's primary key must
 *     contain its partition key, and the old table needs the same index to be attached;
 *  2. CHECK (CreatedDate < bound) added NOT VALID, then VALIDATEd (a scan under a lock that lets
 *     inserts through), so that ATTACH trusts it and does not scan again under its own lock.
 * Then one short transaction, the old table locked:
 *  3. the old table renamed `<table>_legacy`, its indexes renamed, its identity, old primary key and
 *     triggers dropped, the new index made its primary key;
 *  4. the partitioned parent created LIKE it (same columns in the same order, same defaults), owning
 *     the identity so Ids continue above the old ones, primary key (Id, CreatedDate), the old table's
 *     indexes and triggers re-created on it from their own definitions;
 *  5. the old table ATTACHed whole as the partition FROM (MINVALUE) TO (bound): its constraint proves
 *     the range, its indexes match the parent's and are adopted, nothing is scanned or copied. An
 *     empty old table (a new install) is dropped instead, so old-dated rows get their own periods;
 *  6. DEFAULT and the period partitions from the bound through two periods ahead.
 * A migration interrupted before step 3 is resumed by running it again (every step checks first);
 * steps 3-6 commit together or not at all.
 */
export async function convertToPartitioned(
  q: QueryRunner,
  table: FrozenPartitionedTable,
  now: Date,
  /** Told when each step is done (the upgrade benchmark times them). */
  step: (name: 'index' | 'validate' | 'switch') => void = () => undefined,
): Promise<void> {
  const sql: Sql = (text, params) => q.query(text, params);
  if (await isPartitioned(sql, table.table)) return;
  const name = table.table;
  const legacy = legacyPartitionName(table);
  const key = `"${PARTITION_KEY}"`;
  const idIndex = `${name}_Id_CreatedDate`;

  // 1. The index the primary key will use, without locking writers out (an invalid leftover of an interrupted build is replaced).
  const [existing] = await sql(`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`, [idIndex]);
  if (existing && !existing.valid) await sql(`DROP INDEX CONCURRENTLY IF EXISTS ${ident(idIndex)}`);
  await sql(`CREATE UNIQUE INDEX CONCURRENTLY IF NOT EXISTS ${ident(idIndex)} ON ${ident(name)} ("Id", ${key})`);
  step('index');

  // 2. The range the old table will cover, proven once by a scan that does not block inserts.
  const [{ newest }] = await sql(`SELECT max(${key}) AS newest FROM ${ident(name)}`);
  const bound = legacyUpperBound(table.period, now, newest ? new Date(newest) : null);
  const check = `${legacy}_range`;
  await sql(`ALTER TABLE ${ident(name)} DROP CONSTRAINT IF EXISTS ${ident(check)}`);
  await sql(`ALTER TABLE ${ident(name)} ADD CONSTRAINT ${ident(check)} CHECK (${key} < ${timestampLiteral(bound)}) NOT VALID`);
  await sql(`ALTER TABLE ${ident(name)} VALIDATE CONSTRAINT ${ident(check)}`);
  step('validate');

  await q.startTransaction();
  try {
    await sql(`LOCK TABLE ${ident(name)} IN ACCESS EXCLUSIVE MODE`);
    // What the parent must reproduce, read before anything is renamed (their text names the table).
    const indexes = (await sql(
      `SELECT ic.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisprimary AS "primary"
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class c ON c.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname = $1 ORDER BY ic.relname`,
      [name],
    )) as { name: string; def: string; primary: boolean }[];
    const triggers = (await sql(
      `SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS def, (t.tgtype & 1) = 1 AS "row"
         FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relname = $1 AND NOT t.tgisinternal ORDER BY t.tgname`,
      [name],
    )) as { name: string; def: string; row: boolean }[];
    const [{ empty }] = await sql(`SELECT NOT EXISTS (SELECT 1 FROM ${ident(name)}) AS empty`);
    const [{ next }] = await sql(
      `SELECT greatest(coalesce((SELECT max("Id") FROM ${ident(name)}), 0),
                       coalesce(pg_sequence_last_value(pg_get_serial_sequence($1, 'Id')), 0)) + 1 AS next`,
      [ident(name)],
    );
    const primary = indexes.find((i) => i.primary);

    // 3. The old table steps aside, keeping its rows, indexes and statement triggers.
    await sql(`ALTER TABLE ${ident(name)} RENAME TO ${ident(legacy)}`);
    let n = 0;
    for (const index of indexes) await sql(`ALTER INDEX ${ident(index.name)} RENAME TO ${ident(`${legacy}_${++n}`)}`);
    await sql(`ALTER TABLE ${ident(legacy)} ALTER COLUMN "Id" DROP IDENTITY IF EXISTS`);
    if (primary) await sql(`ALTER TABLE ${ident(legacy)} DROP CONSTRAINT ${ident(`${legacy}_${indexes.indexOf(primary) + 1}`)}`);
    await sql(`ALTER TABLE ${ident(legacy)} ADD CONSTRAINT ${ident(`${legacy}_pkey`)} PRIMARY KEY USING INDEX ${ident(`${legacy}_${indexes.findIndex((i) => i.name === idIndex) + 1}`)}`);
    // Every trigger moves to the parent (row triggers are cloned back to each partition, the append-only
    // TRUNCATE refusal is copied back by createPartition's rule); left on the old table, a statement
    // trigger with transition tables (a rollup's) would fire a second time for it.
    for (const trigger of triggers) await sql(`DROP TRIGGER ${ident(trigger.name)} ON ${ident(legacy)}`);

    // 4. The partitioned parent, under the table's name.
    await sql(`CREATE TABLE ${ident(name)} (LIKE ${ident(legacy)} INCLUDING DEFAULTS INCLUDING STORAGE INCLUDING COMPRESSION) PARTITION BY RANGE (${key})`);
    await sql(`ALTER TABLE ${ident(name)} ALTER COLUMN "Id" ADD GENERATED BY DEFAULT AS IDENTITY (START WITH ${BigInt(next).toString()})`);
    await sql(`ALTER TABLE ${ident(name)} ADD CONSTRAINT ${ident(`${name}_pkey`)} PRIMARY KEY ("Id", ${key})`);
    for (const index of indexes) if (!index.primary && index.name !== idIndex) await sql(index.def);
    for (const trigger of triggers) await sql(trigger.def);

    // 5. The old rows, attached where they are (or nothing to keep).
    const current = periodStart(table.period, now);
    let from = bound;
    if (empty) {
      await sql(`DROP TABLE ${ident(legacy)}`);
      from = current;
    } else {
      await sql(`ALTER TABLE ${ident(name)} ATTACH PARTITION ${ident(legacy)} FOR VALUES FROM (MINVALUE) TO (${timestampLiteral(bound)})`);
      for (const trigger of await statementTriggersFor(sql, name, legacy)) await sql(trigger);
    }

    // 6. DEFAULT, and every period from there to two ahead of now.
    await createPartition(sql, table, 'default');
    const last = addPeriods(table.period, current, PERIODS_AHEAD);
    for (let start = from; start.getTime() <= last.getTime(); start = addPeriods(table.period, start, 1)) {
      await createPartition(sql, table, { name: partitionName(table, start), from: start, to: addPeriods(table.period, start, 1) });
    }
    await q.commitTransaction();
    step('switch');
  } catch (error) {
    await q.rollbackTransaction();
    throw error;
  }
}
