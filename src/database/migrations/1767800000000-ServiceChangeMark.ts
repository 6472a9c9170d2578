import { MigrationInterface, QueryRunner } from 'typeorm';

/** The registry tables whose changes made in the database are recorded by row triggers (contract 18), frozen here. */
const REGISTRY_TABLES = ['TenantRegistry', 'RoleRegistry', 'RoleRegistryPermission', 'UserRegistry', 'UserRegistryApiKey'] as const;
/** The registry's trigger functions, whose test of the service's mark is replaced. */
const MARKED_FUNCTIONS = ['AdminChangeFromDatabase', 'AdminChangeFromDatabaseTruncate'] as const;
/** AuditEnqueue's one table, as its definition names it. */
const ENQUEUE_TABLE = 'INSERT INTO "AuditPending"';

/** The test the registry triggers made of the mark until now: a value anyone could set. */
const PUBLIC_MARK = `current_setting('app.admin_change', true) = 'service'`;
/** The test from now on: the mark must be the service's secret, known to PostgreSQL only by its SHA-256. */
const SECRET_MARK = `"AdminChangeMarked"()`;

const rowTrigger = (table: string, when: string) =>
  `CREATE TRIGGER "${table}_AdminChange" AFTER INSERT OR UPDATE OR DELETE ON "${table}" FOR EACH ROW ${when}EXECUTE FUNCTION "AdminChangeFromDatabase"()`;

/**
 * Issue 29 (contract 18, "changes made in the database"): two ways past the registry's record that need
 * no privilege beyond writing the registry tables.
 *
 * 1. The mark of the service's own transactions was `app.admin_change = 'service'`, a value any
 *    database user could set (`SELECT set_config('app.admin_change', 'service', true); UPDATE
 *    "UserRegistry" …`) to make a change the triggers did not record. Now the mark's value must be the
 *    service's secret (derived from ApiHmacKey, src/database/service-change-mark.ts), which reaches
 *    PostgreSQL only as a setting of the service's own sessions. `"AdminChangeMarked"()` compares the
 *    SHA-256 of the transaction's mark with the one the service writes into its body at start (until
 *    then it answers false: every change is recorded). A SQL-standard body (`RETURN …`), parsed once
 *    here, so no caller's search path can change what it calls, and simple enough for PostgreSQL to
 *    inline; the registry's row triggers test it in their WHEN clause, so a marked change (every change
 *    the service makes, sign-in bookkeeping included) no longer calls the recording function at all
 *    (measured with 4 writers on one row: the statement took 1.33x its time without the trigger before,
 *    1.10x with the WHEN clause).
 * 2. The trigger functions named their tables without a schema, and a session's temporary schema comes
 *    first in its search path: `CREATE TEMP TABLE "AdminChange" (LIKE "AdminChange")` sent the record of
 *    the session's next registry change into a table that vanishes with the session (likewise
 *    "AuditPending" for the log's waiting entries). The registry's trigger functions now run with the
 *    search path fixed to the schema of the tables, temporary schema last; AuditEnqueue, run for every
 *    audit row, names its one table with the schema instead (a fixed search path costs a setting saved
 *    and restored per call, measured 7 µs a row on a bulk insert).
 *
 * The functions' bodies are otherwise unchanged: the mark's test and AuditEnqueue's table are replaced
 * in the text PostgreSQL holds (pg_get_functiondef), each exactly once or the migration fails.
 */
export class ServiceChangeMark1767800000000 implements MigrationInterface {
  name = 'ServiceChangeMark1767800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE FUNCTION "AdminChangeMarked"() RETURNS boolean LANGUAGE sql STABLE RETURN false`);
    const schema = await currentSchema(q);
    for (const name of MARKED_FUNCTIONS) await q.query(`ALTER FUNCTION "${name}"() SET search_path = ${schema}, pg_temp`);
    await replaceInFunction(q, 'AuditEnqueue', ENQUEUE_TABLE, `INSERT INTO ${schema}."AuditPending"`);
    for (const name of MARKED_FUNCTIONS) await replaceInFunction(q, name, PUBLIC_MARK, SECRET_MARK);
    for (const table of REGISTRY_TABLES) {
      await q.query(`DROP TRIGGER "${table}_AdminChange" ON "${table}"`);
      await q.query(rowTrigger(table, `WHEN (NOT ${SECRET_MARK}) `));
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of REGISTRY_TABLES) {
      await q.query(`DROP TRIGGER "${table}_AdminChange" ON "${table}"`);
      await q.query(rowTrigger(table, ''));
    }
    for (const name of MARKED_FUNCTIONS) await replaceInFunction(q, name, SECRET_MARK, PUBLIC_MARK);
    await replaceInFunction(q, 'AuditEnqueue', `INSERT INTO ${await currentSchema(q)}."AuditPending"`, ENQUEUE_TABLE);
    for (const name of MARKED_FUNCTIONS) await q.query(`ALTER FUNCTION "${name}"() RESET search_path`);
    await q.query(`DROP FUNCTION "AdminChangeMarked"()`);
  }
}

/** The schema the tables live in, quoted as an identifier (a fixed search path puts the temporary schema after it; pg_catalog is searched first anyway). */
async function currentSchema(q: QueryRunner): Promise<string> {
  const [{ schema }] = (await q.query(`SELECT quote_ident(current_schema()) AS "schema"`)) as { schema: string }[];
  return schema;
}

/** Replaces `from` by `to` in function `name`'s definition, which must hold it exactly once. */
async function replaceInFunction(q: QueryRunner, name: string, from: string, to: string): Promise<void> {
  const [{ definition }] = (await q.query(`SELECT pg_get_functiondef($1::regprocedure) AS "definition"`, [`"${name}"()`])) as { definition: string }[];
  const found = definition.split(from).length - 1;
  if (found !== 1) throw new Error(`${name}: expected the text ${from} once in its definition, found it ${found} times`);
  await q.query(definition.split(from).join(to));
}
