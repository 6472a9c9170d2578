import { MigrationInterface, QueryRunner } from 'typeorm';

/** The audit tables whose `search` reads one lowered text column instead of ILIKE on each column. */
const TABLES = [
  { table: 'UserLogin', columns: ['CreatedUser', 'RemoteIp', 'UserAgent', 'FailureMessage'] },
  { table: 'UserLogout', columns: ['CreatedUser', 'CutByUser', 'RemoteIp', 'UserAgent', 'Message'] },
];
/** Rows updated per statement while existing rows get their search text (each batch commits on its own). */
const BATCH = 50_000;

/**
 * `lower()` of the searched columns joined by U+001F. Stored text never holds a control character
 * (contract 9), so a search can never match across two columns, and `SearchText LIKE lower(pattern)`
 * is exactly what `col ILIKE pattern` on each column was (PostgreSQL's ILIKE lowers both sides with
 * lower() and matches case-sensitively) — without lowering every column of every row on every search.
 */
const searchText = (row: string, columns: string[]) => `lower(concat_ws(chr(31), ${columns.map((c) => `${row}"${c}"`).join(', ')}))`;

/**
 * Issue 12: `search` over the audit trails at 10M rows. Measured on 70,000 rows in the window
 * (bench/RESULTS.md): four ILIKEs per row cost ≈ 7 µs, a LIKE on the stored lowered text ≈ 0.4 µs, so
 * an exact count of the matches in the default window drops from ≈ 500 ms to ≈ 30 ms. One trigram
 * index on the search text replaces the four (or five) per-column ones: less to write per sign-in.
 *
 * Runs outside a transaction (under the migration advisory lock), so a populated table is never
 * locked against sign-ins: the column is added without a rewrite, a trigger fills it for new rows
 * (also those written by nodes still on the previous version), existing rows are filled in committed
 * batches by Id (a restarted migration resumes where it stopped), and the index is built
 * CONCURRENTLY (an invalid one left by an interrupted build is replaced).
 */
export class AuditSearchText1764400000000 implements MigrationInterface {
  name = 'AuditSearchText1764400000000';
  transaction = false;

  async up(q: QueryRunner): Promise<void> {
    for (const { table, columns } of TABLES) {
      await q.query(`ALTER TABLE "${table}" ADD COLUMN IF NOT EXISTS "SearchText" text`);
      await q.query(
        `CREATE OR REPLACE FUNCTION "${table}_SearchText"() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN NEW."SearchText" := ${searchText('NEW.', columns)}; RETURN NEW; END $$`,
      );
      await q.query(`DROP TRIGGER IF EXISTS "${table}_SearchText" ON "${table}"`);
      await q.query(
        `CREATE TRIGGER "${table}_SearchText" BEFORE INSERT OR UPDATE OF ${columns.map((c) => `"${c}"`).join(', ')} ON "${table}"
         FOR EACH ROW EXECUTE FUNCTION "${table}_SearchText"()`,
      );
      const [{ low, high }] = (await q.query(`SELECT min("Id") AS low, max("Id") AS high FROM "${table}"`)) as { low: string | null; high: string | null }[];
      if (low !== null && high !== null) {
        for (let from = BigInt(low); from <= BigInt(high); from += BigInt(BATCH)) {
          await q.query(
            `UPDATE "${table}" SET "SearchText" = ${searchText('', columns)}
              WHERE "Id" >= $1 AND "Id" < $2 AND "SearchText" IS NULL`,
            [from.toString(), (from + BigInt(BATCH)).toString()],
          );
        }
      }
      const index = `IX_${table}_SearchText_Trgm`;
      const [existing] = (await q.query(
        `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1`,
        [index],
      )) as { valid: boolean }[];
      if (existing && !existing.valid) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "${index}"`);
      await q.query(`CREATE INDEX CONCURRENTLY IF NOT EXISTS "${index}" ON "${table}" USING gin ("SearchText" gin_trgm_ops)`);
      for (const column of columns) await q.query(`DROP INDEX CONCURRENTLY IF EXISTS "IX_${table}_${column}_Trgm"`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const { table, columns } of TABLES) {
      for (const column of columns) {
        await q.query(`CREATE INDEX IF NOT EXISTS "IX_${table}_${column}_Trgm" ON "${table}" USING gin ("${column}" gin_trgm_ops)`);
      }
      await q.query(`DROP INDEX IF EXISTS "IX_${table}_SearchText_Trgm"`);
      await q.query(`DROP TRIGGER IF EXISTS "${table}_SearchText" ON "${table}"`);
      await q.query(`DROP FUNCTION IF EXISTS "${table}_SearchText"()`);
      await q.query(`ALTER TABLE "${table}" DROP COLUMN IF EXISTS "SearchText"`);
    }
  }
}
