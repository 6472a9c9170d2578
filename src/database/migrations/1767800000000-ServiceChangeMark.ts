import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The functions run in whoever's session writes the registry, whose statements name several tables:
 * they run with a fixed search path (frozen here). AuditEnqueue, run for every audit row, names one
 * table, qualified instead (a fixed search path costs a setting saved and restored per call, measured
 * 7 µs a row on a bulk insert); AuditAppendOnly names none.
 */
const PATH_FIXED_FUNCTIONS = ['AdminChangeFromDatabase', 'AdminChangeFromDatabaseTruncate', 'AdminChangeMarked'] as const;
/** AuditEnqueue's one table, as its definition names it. */
const ENQUEUE_TABLE = 'INSERT INTO "AuditPending"';
/** The registry triggers' functions, whose test of the service's mark is replaced. */
const MARKED_FUNCTIONS = ['AdminChangeFromDatabase', 'AdminChangeFromDatabaseTruncate'] as const;

/** The test the registry triggers made of the mark until now: a value anyone could set. */
const PUBLIC_MARK = `current_setting('app.admin_change', true) = 'service'`;
/** The test from now on: the mark must be the service's secret, known here only by its SHA-256. */
const SECRET_MARK = `"AdminChangeMarked"()`;

/**
 * Issue 29 (contract 18, "changes made in the database"): two ways past the registry's record that need
 * no privilege beyond writing the registry tables.
 *
 * 1. The mark of the service's own transactions was `app.admin_change = 'service'`, a value any
 *    database user could set (`SELECT set_config('app.admin_change', 'service', true); UPDATE
 *    "UserRegistry" …`) to make a change the triggers did not record. Now the mark's value must be the
 *    service's secret (derived from ApiHmacKey, src/database/service-change-mark.ts), which reaches
 *    PostgreSQL only as a setting of the service's own sessions; the triggers compare its SHA-256 with
 *    the one row of `ServiceChangeMark` (written by the service at start; readable by every role, since
 *    the triggers run as whoever writes, writable only by its owner). Setting the old value, or any value
 *    but the secret, is recorded like any change made in the database.
 * 2. The trigger functions named their tables without a schema, and a session's temporary schema comes
 *    first in its search path: `CREATE TEMP TABLE "AdminChange" (LIKE "AdminChange")` sent the record of
 *    the session's next registry change into a table that vanishes with the session (likewise
 *    "AuditPending" for the log's waiting entries, "ServiceChangeMark" for the mark's hash). The
 *    registry's trigger functions now run with the search path fixed to the schema of the tables,
 *    temporary schema last; AuditEnqueue names its table with the schema.
 *
 * The functions' bodies are otherwise unchanged: the mark's test and AuditEnqueue's table are replaced
 * in the text PostgreSQL holds (pg_get_functiondef), each exactly once or the migration fails.
 */
export class ServiceChangeMark1767800000000 implements MigrationInterface {
  name = 'ServiceChangeMark1767800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "ServiceChangeMark" (
        "Id" smallint NOT NULL,
        "Hash" bytea NOT NULL,
        CONSTRAINT "ServiceChangeMark_pkey" PRIMARY KEY ("Id"),
        CONSTRAINT "ServiceChangeMark_Id_check" CHECK ("Id" = 1),
        CONSTRAINT "ServiceChangeMark_Hash_check" CHECK (octet_length("Hash") = 32)
      )`);
    await q.query(`GRANT SELECT ON "ServiceChangeMark" TO PUBLIC`);
    // No row yet: until the service writes its hash at start, no mark is accepted and every change is recorded.
    await q.query(`
      CREATE FUNCTION "AdminChangeMarked"() RETURNS boolean LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM "ServiceChangeMark" WHERE "Hash" = sha256(convert_to(current_setting('app.admin_change', true), 'UTF8')))
      $$`);
    const schema = await currentSchema(q);
    for (const name of PATH_FIXED_FUNCTIONS) await q.query(`ALTER FUNCTION "${name}"() SET search_path = ${schema}, pg_temp`);
    await replaceInFunction(q, 'AuditEnqueue', ENQUEUE_TABLE, `INSERT INTO ${schema}."AuditPending"`);
    for (const name of MARKED_FUNCTIONS) await replaceInFunction(q, name, PUBLIC_MARK, SECRET_MARK);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const name of MARKED_FUNCTIONS) await replaceInFunction(q, name, SECRET_MARK, PUBLIC_MARK);
    await replaceInFunction(q, 'AuditEnqueue', `INSERT INTO ${await currentSchema(q)}."AuditPending"`, ENQUEUE_TABLE);
    for (const name of MARKED_FUNCTIONS) await q.query(`ALTER FUNCTION "${name}"() RESET search_path`);
    await q.query(`DROP FUNCTION "AdminChangeMarked"()`);
    await q.query(`DROP TABLE "ServiceChangeMark"`);
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
