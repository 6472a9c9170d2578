import { QueryRunner } from 'typeorm';
import {
  addPeriods,
  ident,
  legacyPartitionName,
  legacyUpperBound,
  PARTITION_KEY,
  PartitionedTable,
  periodStart,
  PERIODS_AHEAD,
  partitionName,
  timestampLiteral,
} from './partition-plan';
import { createPartition, isPartitioned, Sql, statementTriggersFor } from './partition-sql';

/**
 * Converts one plain table into a table partitioned by RANGE (CreatedDate) WITHOUT copying a row
 * (contract 16; docs/decisions/0018-retention-by-partition.md). For the migrations; `now` is the wall
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
  table: PartitionedTable,
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
