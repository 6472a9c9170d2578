/**
 * The mark of the service's own changes to the registry tables (contract 18). The registry triggers
 * (migration AdminChange, "AdminChangeFromDatabase") record every INSERT, UPDATE and DELETE as a
 * change made in the database (CredentialTypeId 4) unless the transaction carries this
 * transaction-local setting: the service sets it in every transaction that writes those tables,
 * because it records its own AdminChange rows there (or, for sign-in bookkeeping, none). Transaction-
 * local, so it ends with the transaction and never leaks to the next user of a pooled connection
 * (or of the one shared PGlite session). It is not a secret: a database user who sets it, or disables
 * the triggers, escapes the record (docs/decisions/0031-admin-changes.md).
 */
export const SERVICE_CHANGE_SETTING = 'app.admin_change';

/** The statement that marks the current transaction. */
export const MARK_SERVICE_CHANGE_SQL = `SELECT set_config('${SERVICE_CHANGE_SETTING}', 'service', true)`;

/**
 * The same mark as a condition that is always true, for a single statement outside any transaction
 * (an UPDATE of sign-in bookkeeping): set while the statement qualifies its rows, before any row
 * trigger fires, and gone when the statement's own transaction ends.
 */
export const SERVICE_CHANGE_CONDITION = `set_config('${SERVICE_CHANGE_SETTING}', 'service', true) IS NOT NULL`;
