import { MigrationInterface, QueryRunner } from 'typeorm';

/** A per-minute rollup of a table (decision 0021), as this migration creates it. */
export interface RollupSpec {
  table: string;
  rollup: string;
  dateColumn: string;
  keys: string[];
  /** NOT NULL bigint columns: the rollup keeps `<Column>Sum` (numeric), `<Column>Min`, `<Column>Max`. */
  values: string[];
  /** A text column kept as its greatest value per rollup row. */
  name?: string;
}

const EPOCH = `'1970-01-01T00:00:00Z'::timestamptz`;
const q = (c: string) => `"${c}"`;

/**
 * The statements that create a rollup and keep it exactly equal to its table's rows, whoever writes
 * them (the capture flush, a replay, a person with psql): statement-level triggers with transition
 * tables, so a flush's INSERT of 20,000 rows adds one GROUP BY of those rows to the rollup, not a
 * trigger call per row.
 * - INSERT: the new rows' minutes are added (ON CONFLICT … DO UPDATE on the NULLS NOT DISTINCT key;
 *   keys are written in key order, so two flushes lock rows in the same order).
 * - DELETE, UPDATE: the minutes and keys the statement touched are computed again from the table
 *   (a least and a greatest cannot be taken back); rare: nothing in the service updates or deletes.
 * - TRUNCATE: the rollup is emptied.
 * Exported so a later migration that re-creates the table (partitioning, contract 16) can re-create
 * the triggers on the new parent.
 */
export function rollupStatements(s: RollupSpec): string[] {
  const keyList = s.keys.map(q).join(', ');
  const minute = `date_bin('1 minute', ${q(s.dateColumn)}, ${EPOCH})`;
  const valueColumns = s.values.flatMap((v) => [`${v}Sum`, `${v}Min`, `${v}Max`]);
  const columns = ['Minute', ...s.keys, ...(s.name ? [s.name] : []), 'Rows', ...valueColumns].map(q).join(', ');
  const aggregates = [
    ...(s.name ? [`max(${q(s.name)})`] : []),
    'count(*)',
    ...s.values.flatMap((v) => [`sum(${q(v)})`, `min(${q(v)})`, `max(${q(v)})`]),
  ].join(', ');
  const groupBy = Array.from({ length: s.keys.length + 1 }, (_, i) => i + 1).join(', ');
  const merge = [
    ...(s.name ? [`${q(s.name)} = greatest(m.${q(s.name)}, excluded.${q(s.name)})`] : []),
    `"Rows" = m."Rows" + excluded."Rows"`,
    ...s.values.flatMap((v) => [
      `${q(`${v}Sum`)} = m.${q(`${v}Sum`)} + excluded.${q(`${v}Sum`)}`,
      `${q(`${v}Min`)} = least(m.${q(`${v}Min`)}, excluded.${q(`${v}Min`)})`,
      `${q(`${v}Max`)} = greatest(m.${q(`${v}Max`)}, excluded.${q(`${v}Max`)})`,
    ]),
  ].join(', ');
  const upsert = (rows: string, where = '') =>
    `INSERT INTO ${q(s.rollup)} AS m (${columns})
       SELECT ${minute}, ${keyList}, ${aggregates} FROM ${rows} ${where} GROUP BY ${groupBy} ORDER BY ${groupBy}
     ON CONFLICT ("Minute", ${keyList}) DO UPDATE SET ${merge}`;
  // The keys a DELETE or UPDATE touched (the transition tables serve every statement of the trigger),
  // removed from the rollup and computed again from the table: one date-index range per key.
  const recompute = (touched: string) => {
    const keys = `(SELECT DISTINCT ${minute} AS "Minute", ${keyList} FROM (${touched}) x)`;
    const sameKey = (a: string, b: string) => s.keys.map((k) => `${a}.${q(k)} IS NOT DISTINCT FROM ${b}.${q(k)}`).join(' AND ');
    const rows = `(SELECT r.* FROM ${keys} k CROSS JOIN LATERAL (
                     SELECT t.* FROM ${q(s.table)} t
                      WHERE t.${q(s.dateColumn)} >= k."Minute" AND t.${q(s.dateColumn)} < k."Minute" + interval '1 minute' AND ${sameKey('t', 'k')}) r) rows`;
    // The lock holds back other writers' triggers until this commits: a key another statement creates
    // meanwhile would otherwise be counted by it and again by this recompute.
    return `LOCK TABLE ${q(s.rollup)} IN SHARE ROW EXCLUSIVE MODE;
            DELETE FROM ${q(s.rollup)} m USING ${keys} k WHERE m."Minute" = k."Minute" AND ${sameKey('m', 'k')};
            ${upsert(rows)};`;
  };
  // Every minute of [low, high) computed again from the table: for whoever moves or drops rows without
  // the triggers (retention detaching a partition, moving rows out of a DEFAULT partition).
  const rangeRows = `(SELECT t.* FROM ${q(s.table)} t WHERE t.${q(s.dateColumn)} >= low AND t.${q(s.dateColumn)} < high) rows`;
  const recomputeRange = `CREATE OR REPLACE FUNCTION ${q(`${s.rollup}_Recompute`)}(low timestamptz, high timestamptz) RETURNS void LANGUAGE plpgsql AS $$ BEGIN
      IF low <> date_bin('1 minute', low, ${EPOCH}) OR high <> date_bin('1 minute', high, ${EPOCH}) THEN
        RAISE EXCEPTION 'a rollup is recomputed by whole minutes';
      END IF;
      LOCK TABLE ${q(s.rollup)} IN SHARE ROW EXCLUSIVE MODE;
      DELETE FROM ${q(s.rollup)} WHERE "Minute" >= low AND "Minute" < high;
      ${upsert(rangeRows)};
    END $$`;
  const fn = (suffix: string, body: string) =>
    `CREATE OR REPLACE FUNCTION ${q(`${s.rollup}_${suffix}`)}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body} RETURN NULL; END $$`;
  const trigger = (suffix: string, event: string, referencing: string) =>
    `CREATE TRIGGER ${q(`${s.rollup}_${suffix}`)} AFTER ${event} ON ${q(s.table)} ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${q(`${s.rollup}_${suffix}`)}()`;
  const selectAll = (rows: string) => `SELECT ${q(s.dateColumn)}, ${keyList} FROM ${rows}`;
  return [
    fn('Insert', `${upsert('new_rows')};`),
    fn('Delete', recompute(selectAll('old_rows'))),
    fn('Update', recompute(`${selectAll('old_rows')} UNION ALL ${selectAll('new_rows')}`)),
    fn('Truncate', `TRUNCATE ${q(s.rollup)};`),
    recomputeRange,
    ...['Insert', 'Delete', 'Update', 'Truncate'].map((suffix) => `DROP TRIGGER IF EXISTS ${q(`${s.rollup}_${suffix}`)} ON ${q(s.table)}`),
    trigger('Insert', 'INSERT', 'REFERENCING NEW TABLE AS new_rows'),
    trigger('Delete', 'DELETE', 'REFERENCING OLD TABLE AS old_rows'),
    trigger('Update', 'UPDATE', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows'),
    `CREATE TRIGGER ${q(`${s.rollup}_Truncate`)} AFTER TRUNCATE ON ${q(s.table)} FOR EACH STATEMENT EXECUTE FUNCTION ${q(`${s.rollup}_Truncate`)}()`,
  ];
}

export const ARCHIVER_WARNING_MINUTE: RollupSpec = {
  table: 'ArchiverWarning',
  rollup: 'ArchiverWarningMinute',
  dateColumn: 'CreatedDate',
  keys: ['StageId', 'EntityAnalysisModelGuid', 'Instance'],
  values: ['DurationMicroseconds'],
  name: 'EntityAnalysisModelName',
};

/**
 * Issue 21: a window of 700,000 ArchiverWarning rows is counted exactly on every grid read, and a
 * series over a day groups 10 million. The rollup holds one row per minute, stage, model and instance
 * (count, sum, least and greatest duration, the model's name), kept by triggers (rollupStatements);
 * reads take whole minutes from it and only the partial minutes at a window's edges from the rows.
 *
 * In one transaction: the triggers are created (their lock holds writers back until the commit), then
 * the rollup is filled from the rows already there, so none is counted twice or missed.
 */
export class ArchiverWarningMinute1765500000001 implements MigrationInterface {
  name = 'ArchiverWarningMinute1765500000001';

  async up(q: QueryRunner): Promise<void> {
    const s = ARCHIVER_WARNING_MINUTE;
    await q.query(
      `CREATE TABLE "ArchiverWarningMinute" (
         "Id" bigint GENERATED BY DEFAULT AS IDENTITY CONSTRAINT "ArchiverWarningMinute_pkey" PRIMARY KEY,
         "Minute" timestamptz NOT NULL,
         "StageId" smallint,
         "EntityAnalysisModelGuid" uuid,
         "Instance" text,
         "EntityAnalysisModelName" text,
         "Rows" bigint NOT NULL,
         "DurationMicrosecondsSum" numeric NOT NULL,
         "DurationMicrosecondsMin" bigint NOT NULL,
         "DurationMicrosecondsMax" bigint NOT NULL)`,
    );
    // Updated by every flush of the current minute: HOT updates (no indexed column changes), and the
    // same autovacuum cadence as the telemetry tables (migration AppendOnlyAutovacuum).
    await q.query(`ALTER TABLE "ArchiverWarningMinute" SET (fillfactor = 90, autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0)`);
    await q.query(
      `CREATE UNIQUE INDEX "IX_ArchiverWarningMinute_Key" ON "ArchiverWarningMinute" ("Minute", "StageId", "EntityAnalysisModelGuid", "Instance") NULLS NOT DISTINCT`,
    );
    for (const sql of rollupStatements(s)) await q.query(sql);
    await q.query(
      `INSERT INTO "ArchiverWarningMinute" ("Minute", "StageId", "EntityAnalysisModelGuid", "Instance", "EntityAnalysisModelName", "Rows",
                                            "DurationMicrosecondsSum", "DurationMicrosecondsMin", "DurationMicrosecondsMax")
       SELECT date_bin('1 minute', "CreatedDate", ${EPOCH}), "StageId", "EntityAnalysisModelGuid", "Instance", max("EntityAnalysisModelName"), count(*),
              sum("DurationMicroseconds"), min("DurationMicroseconds"), max("DurationMicroseconds")
         FROM "ArchiverWarning" GROUP BY 1, 2, 3, 4`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const suffix of ['Insert', 'Delete', 'Update', 'Truncate']) {
      await q.query(`DROP TRIGGER IF EXISTS "ArchiverWarningMinute_${suffix}" ON "ArchiverWarning"`);
      await q.query(`DROP FUNCTION IF EXISTS "ArchiverWarningMinute_${suffix}"()`);
    }
    await q.query(`DROP FUNCTION IF EXISTS "ArchiverWarningMinute_Recompute"(timestamptz, timestamptz)`);
    await q.query(`DROP TABLE IF EXISTS "ArchiverWarningMinute"`);
  }
}
