import { createHash, createHmac } from 'node:crypto';
import type { DataSource } from 'typeorm';

/**
 * The mark of the service's own changes to the registry tables (contract 18). The registry triggers
 * (migrations AdminChange, AdminChangeTruncate, ServiceChangeMark) record every INSERT, UPDATE, DELETE
 * and TRUNCATE as a change made in the database (CredentialTypeId 4) unless the transaction carries
 * the mark: the service sets it in every transaction that writes those tables, because it records its
 * own AdminChange rows there (or, for sign-in bookkeeping, none).
 *
 * The mark is a secret, so that a database user cannot set it to escape the record: its value is
 * derived from ApiHmacKey (so every node of a cluster has the same one), kept by each of the service's
 * sessions as the session setting `app.service_mark` (given at connection start, never in a
 * statement's text or parameters, so neither pg_stat_activity nor the server's log of a failed
 * statement shows it), and copied into the transaction-local setting `app.admin_change` by the
 * statements below. The triggers accept the transaction-local value only when its SHA-256 is the one
 * the service writes at start into "AdminChangeMarked"() (writeServiceChangeMark). Transaction-
 * local, so it ends with the transaction and never leaks to the next user of a pooled connection (or of
 * the one shared PGlite session). What still escapes: a table owner or superuser who disables the
 * triggers or rewrites that function (docs/decisions/0031-admin-changes.md).
 */
export const SERVICE_CHANGE_SETTING = 'app.admin_change';
/** The session setting that holds the mark on the service's own connections. */
export const SERVICE_MARK_SESSION_SETTING = 'app.service_mark';

/** The statement that marks the current transaction. */
export const MARK_SERVICE_CHANGE_SQL = `SELECT set_config('${SERVICE_CHANGE_SETTING}', current_setting('${SERVICE_MARK_SESSION_SETTING}'), true)`;

/**
 * The same mark as a condition that is always true, for a single statement outside any transaction
 * (an UPDATE of sign-in bookkeeping): set while the statement qualifies its rows, before any row
 * trigger fires, and gone when the statement's own transaction ends. On a connection without the
 * session setting it fails (42704) rather than write unmarked.
 */
export const SERVICE_CHANGE_CONDITION = `set_config('${SERVICE_CHANGE_SETTING}', current_setting('${SERVICE_MARK_SESSION_SETTING}'), true) IS NOT NULL`;

/** The mark's value: 64 hex digits, HMAC-SHA256 of a fixed label under ApiHmacKey (nothing else is derived from it this way). */
export function serviceChangeMark(apiHmacKey: string): string {
  return createHmac('sha256', apiHmacKey).update('transaction-monitoring/admin-change-mark/v1').digest('hex');
}

/** node-postgres's `options` startup parameter that gives each new PostgreSQL session the mark. */
export function serviceMarkStartupOption(mark: string): string {
  return `-c ${SERVICE_MARK_SESSION_SETTING}=${mark}`;
}

/** Key of the advisory lock under which nodes starting together write the mark's hash one at a time (two CREATE OR REPLACE of one function at once fail). */
const MARK_LOCK_KEY = 7_206_310_452;

/**
 * The check the registry triggers make (migration ServiceChangeMark), accepting exactly the mark whose
 * SHA-256 is `hash` (hex). IS TRUE: a session that never set the mark has none (NULL), and a NULL in a
 * trigger's WHEN would skip the trigger, i.e. leave the change unrecorded.
 */
const markedFunctionSql = (hash: string) =>
  `CREATE OR REPLACE FUNCTION "AdminChangeMarked"() RETURNS boolean LANGUAGE sql STABLE
   RETURN pg_catalog.sha256(pg_catalog.convert_to(pg_catalog.current_setting('${SERVICE_CHANGE_SETTING}', true), 'UTF8')) OPERATOR(pg_catalog.=) '\\x${hash}'::pg_catalog.bytea IS TRUE`;

/**
 * After the migrations: the hash the triggers accept, written into the body of "AdminChangeMarked"()
 * when it is not already there (a SQL-standard body with the hash as a constant, which PostgreSQL
 * inlines into the triggers' WHEN clause), and, for the embedded database, whose one session ignores
 * startup options, the session setting. Answers whether it replaced another hash: another node (or this
 * one before a change of ApiHmacKey) wrote a different mark, and until every node shares ApiHmacKey the
 * changes of the nodes whose mark is not the written one are recorded twice (their own row, and one as
 * made in the database).
 */
export async function writeServiceChangeMark(dataSource: DataSource, mark: string, options: { sessionSetting: boolean }): Promise<{ replacedAnother: boolean }> {
  if (options.sessionSetting) await dataSource.query(`SELECT set_config('${SERVICE_MARK_SESSION_SETTING}', $1, false)`, [mark]);
  // Hex digits only, computed here: the one constant this DDL (which takes no parameters) is built from.
  const hash = createHash('sha256').update(mark, 'utf8').digest('hex');
  return dataSource.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MARK_LOCK_KEY]);
    const [{ definition }] = (await tx.query(`SELECT pg_get_functiondef('"AdminChangeMarked"()'::regprocedure) AS "definition"`)) as { definition: string }[];
    if (definition.includes(hash)) return { replacedAnother: false };
    await tx.query(markedFunctionSql(hash));
    return { replacedAnother: /[0-9a-f]{64}/.test(definition) };
  });
}
