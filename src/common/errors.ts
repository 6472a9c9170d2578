/**
 * The one place for what the service reads off an error: its message for a log line, and the
 * PostgreSQL SQLSTATE it carries, by name (https://www.postgresql.org/docs/current/errcodes-appendix.html).
 */

/** The text of an error for a log line or a problem detail: `message` when it has one, else the value itself. */
export function messageOf(error: unknown): string {
  return String((error as { message?: unknown } | null)?.message ?? error);
}

/** The SQLSTATEs the service acts on. */
export const PgErrorCode = {
  /** 23505: a row with the same key exists (a name taken, a leaf already sealed). */
  UniqueViolation: '23505',
  /** 23502: a NULL in a NOT NULL column (the sealer's fast statement refusing a row it cannot seal). */
  NotNullViolation: '23502',
  /** 57014: the statement was cancelled, by its `statement_timeout` or an operator. */
  QueryCanceled: '57014',
  /** 55P03: a lock was not granted (`lock_timeout`, NOWAIT). */
  LockNotAvailable: '55P03',
  /** 25P03: the server ended a session idle inside a transaction. */
  IdleInTransactionSessionTimeout: '25P03',
  /** 57P05: the server ended an idle session. */
  IdleSessionTimeout: '57P05',
  /** 40001: the server asks for the transaction again. */
  SerializationFailure: '40001',
  /** 40P01: the server broke a deadlock by ending this transaction. */
  DeadlockDetected: '40P01',
  /** 53300: the server has no connection slot left. */
  TooManyConnections: '53300',
  /** 57P01: the server is shutting down (administrator command). */
  AdminShutdown: '57P01',
  /** 57P02: the server is restarting after a crash. */
  CrashShutdown: '57P02',
  /** 57P03: the server is starting or in recovery and takes no connection yet. */
  CannotConnectNow: '57P03',
} as const;
export type PgErrorCode = (typeof PgErrorCode)[keyof typeof PgErrorCode];

/** SQLSTATE class 08, connection exception: every code starting with these two characters. */
export const PG_CONNECTION_EXCEPTION_CLASS = '08';

/** The SQLSTATE an error carries, on itself or on the driver error TypeORM wraps; undefined when none. */
export function pgErrorCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.code ?? e?.driverError?.code;
  return typeof code === 'string' ? code : undefined;
}
