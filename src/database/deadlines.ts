import { Logger } from '@nestjs/common';
import { Client, ClientConfig, QueryResult } from 'pg';
import { messageOf, PG_CONNECTION_EXCEPTION_CLASS, PgErrorCode } from '../common/errors';

/**
 * Deadlines on every wait for PostgreSQL (issue 11, contract 13 "every wait has a deadline").
 *
 * A server that refuses connections fails fast on its own. A server that stalls, or a network that
 * silently drops packets, does not: a pooled connection's query would wait for TCP to give up
 * (minutes), holding the request and the connection. So:
 * - a new connection, or a wait for a free one, is bounded (pg-pool's connectionTimeoutMillis);
 * - every statement is bounded client side (`query_timeout`), and a connection whose statement passed
 *   that bound is dropped, since its server may answer the old statement at any time (node-postgres
 *   itself would leave the connection busy with it for ever and hand it out again);
 * - the server cancels statements itself a little earlier (`statement_timeout`), so a slow but
 *   reachable server is told apart from a lost one and its connections are kept;
 * - TCP keepalives, and the server ends transactions left idle by a vanished client (releasing their
 *   row locks for the other nodes);
 * - a breaker: once the database is found unreachable, statements fail at once (503 for the
 *   request) instead of each waiting out its own deadline, and one statement per interval probes
 *   whether it is back. A request therefore waits at most about one deadline, however many
 *   statements it would have run.
 */

/** How often one statement is let through to probe a database found unreachable. */
export const BREAKER_PROBE_INTERVAL_MS = 1_000;
/** A transaction left idle this long by its client (a partition) is ended by the server. */
const IDLE_IN_TRANSACTION_MS = 15_000;
/** Keepalive probes start after this much silence on a connection. */
const KEEPALIVE_DELAY_MS = 10_000;

/** Marks an error as "PostgreSQL could not be reached in time" (answered 503, logged as a warning). */
const UNAVAILABLE = Symbol.for('transaction-monitoring.database-unavailable');
/** Marks a commit a synchronous standby did not confirm (see CommitNotConfirmedError). */
const NOT_CONFIRMED = Symbol.for('transaction-monitoring.commit-not-confirmed');

/** Thrown without contacting the server while the breaker is open. */
export class DatabaseUnavailableError extends Error {
  constructor(message = 'the database is unreachable (waiting for it to answer again)') {
    super(message);
    (this as unknown as Record<symbol, boolean>)[UNAVAILABLE] = true;
  }
}

const CONNECTION_MESSAGES = [
  'Query read timeout',
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
];
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** SQLSTATEs of a server going away or out of connection slots (besides class 08, connection exception). */
const SERVER_GONE_CODES = new Set<string>([PgErrorCode.AdminShutdown, PgErrorCode.CrashShutdown, PgErrorCode.CannotConnectNow, PgErrorCode.TooManyConnections]);

/** The errors `error` wraps (TypeORM's driverError, a cause), itself first; at most five deep. */
function* chain(error: unknown): Generator<{ message: string; code: string } & Record<symbol, unknown>> {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const e = current as { message?: unknown; code?: unknown; driverError?: unknown; cause?: unknown } & Record<symbol, unknown>;
    yield Object.assign(Object.create(null) as Record<symbol, unknown>, e, {
      message: typeof e.message === 'string' ? e.message : '',
      code: typeof e.code === 'string' ? e.code : '',
    });
    current = e.driverError ?? e.cause;
  }
}

/**
 * True when `error` (or what it wraps) says PostgreSQL could not be reached: a connection failure, a
 * client-side timeout, a lost connection, a server shutting down or out of connections, or the
 * breaker refusing. These open the breaker: the next statements would wait for the same.
 */
export function isDatabaseUnreachable(error: unknown): boolean {
  for (const e of chain(error)) {
    if (e[UNAVAILABLE]) return true;
    if (NETWORK_CODES.has(e.code)) return true;
    // SQLSTATE class 08 (connection exception), 57P01-03 (shutdown, crash, cannot connect now), 53300 (too many connections).
    if (e.code.startsWith(PG_CONNECTION_EXCEPTION_CLASS) || SERVER_GONE_CODES.has(e.code)) return true;
    if (!e.code && CONNECTION_MESSAGES.some((m) => e.message.startsWith(m))) return true;
  }
  return false;
}

/**
 * SQLSTATEs of a server that answered, but only to say the statement did not finish in time or was
 * stopped (issue 26): not a fault of the request, and not an unreachable server either.
 * - 57014 query_canceled: its `statement_timeout` (the deadline set on every connection; e.g. a
 *   statement waiting for a row lock held by a commit that waits for a stopped synchronous standby),
 *   or an operator's pg_cancel_backend. (The commit's own wait is not bounded by statement_timeout,
 *   which PostgreSQL turns off before committing: the client's query_timeout ends it, see below.);
 * - 55P03 lock_not_available: `lock_timeout`, or NOWAIT;
 * - 25P03 idle_in_transaction_session_timeout, 57P05 idle_session_timeout: the server ended a session;
 * - 40001 serialization_failure, 40P01 deadlock_detected: the server asks for the transaction again.
 */
const DID_NOT_FINISH_CODES = new Set<string>([
  PgErrorCode.QueryCanceled,
  PgErrorCode.LockNotAvailable,
  PgErrorCode.IdleInTransactionSessionTimeout,
  PgErrorCode.IdleSessionTimeout,
  PgErrorCode.SerializationFailure,
  PgErrorCode.DeadlockDetected,
]);

/** True when the server answered that the statement did not finish in time (see DID_NOT_FINISH_CODES). */
export function isDatabaseTimeout(error: unknown): boolean {
  for (const e of chain(error)) {
    if (e[NOT_CONFIRMED]) return true;
    if (DID_NOT_FINISH_CODES.has(e.code)) return true;
  }
  return false;
}

/**
 * True when the request cannot be answered because of the database, not because of itself: it could
 * not be reached (isDatabaseUnreachable) or did not finish in time (isDatabaseTimeout). Answered 503
 * with Retry-After and one summarised warning by the global filter, never 500; a row that must not be
 * lost (a UserLogout) is kept and written again.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return isDatabaseUnreachable(error) || isDatabaseTimeout(error);
}

/**
 * A commit the server made locally but whose wait for a synchronous standby was cancelled (by the
 * statement_timeout while the standby is away): PostgreSQL then reports success with only a WARNING.
 * The row is on the primary and not (yet) on the standby, so a failover now would lose it: this is not
 * the success the caller was promised. The statement fails with this error instead (503); the row may
 * exist (like any answer that did not arrive), and a kept UserLogout is checked against the table
 * before being written again.
 */
export class CommitNotConfirmedError extends Error {
  constructor() {
    super('the commit was not confirmed by the synchronous standby in time (committed on the primary only)');
    (this as unknown as Record<symbol, boolean>)[NOT_CONFIRMED] = true;
  }
}

/** True when `error` (or what it wraps) is a commit made on the primary that the synchronous standby did not confirm. */
export function isCommitNotConfirmed(error: unknown): boolean {
  for (const e of chain(error)) if (e[NOT_CONFIRMED]) return true;
  return false;
}

/** PostgreSQL's WARNING when a commit's wait for synchronous replication is cancelled (syncrep.c). */
const SYNC_WAIT_CANCELLED = /^canceling (the )?wait for synchronous replication/;

/**
 * Open after a failure to reach the server; while open, statements are refused at once except one
 * probe per interval. Any answer from the server closes it. Real time, not the injectable Clock:
 * these are real waits on a real network.
 */
export class DatabaseBreaker {
  private readonly logger = new Logger('Database');
  private openSince: number | null = null;
  private nextProbe = 0;

  get open(): boolean {
    return this.openSince !== null;
  }

  /** Whether a statement may go to the server now (always when closed; one per interval when open). */
  allow(): boolean {
    if (this.openSince === null) return true;
    const now = Date.now();
    if (now < this.nextProbe) return false;
    this.nextProbe = now + BREAKER_PROBE_INTERVAL_MS;
    return true;
  }

  failed(error: unknown): void {
    if (this.openSince === null) {
      this.openSince = Date.now();
      this.logger.warn(`PostgreSQL unreachable, refusing database work until it answers again: ${messageOf(error)}`);
    }
    this.nextProbe = Date.now() + BREAKER_PROBE_INTERVAL_MS;
  }

  answered(): void {
    if (this.openSince === null) return;
    this.logger.warn(`PostgreSQL answers again after ${Math.round((Date.now() - this.openSince) / 1000)} s`);
    this.openSince = null;
  }
}

type Callback = (error: Error | null, result?: QueryResult) => void;

/** The node-postgres client class of one pool, bound to that pool's breaker. */
export function deadlineClient(breaker: DatabaseBreaker): typeof Client {
  return class DeadlineClient extends Client {
    constructor(config?: string | ClientConfig) {
      super(config);
    }

    override connect(callback?: any): any {
      if (!breaker.allow()) {
        const error = new DatabaseUnavailableError();
        if (callback) return void process.nextTick(() => callback(error));
        return Promise.reject(error);
      }
      const observe = (error: Error | null | undefined) => {
        if (error) breaker.failed(error);
        else breaker.answered();
      };
      if (callback) {
        return super.connect((error: Error) => {
          observe(error);
          callback(error);
        });
      }
      return super.connect().then(
        (client) => {
          observe(null);
          return client;
        },
        (error: Error) => {
          observe(error);
          throw error;
        },
      );
    }

    override query(config: any, values?: any, callback?: any): any {
      // Submittables (cursors, streams) keep node-postgres's own handling.
      if (config && typeof config.submit === 'function') return super.query(config, values, callback);
      if (typeof values === 'function') {
        callback = values;
        values = undefined;
      }
      const deliver: Callback | null = typeof callback === 'function' ? callback : null;
      let result: Promise<QueryResult> | undefined;
      let settle!: Callback;
      if (deliver) settle = deliver;
      else result = new Promise((resolve, reject) => (settle = (error, res) => (error ? reject(error) : resolve(res!))));
      if (!breaker.allow()) {
        const error = new DatabaseUnavailableError();
        process.nextTick(() => settle(error));
        return result;
      }
      // A commit whose wait for the synchronous standby was cancelled succeeds with a WARNING only.
      let unconfirmed = false;
      const onNotice = (notice: { message?: string }) => {
        if (SYNC_WAIT_CANCELLED.test(notice.message ?? '')) unconfirmed = true;
      };
      this.on('notice', onNotice);
      super.query(config, values, (error: Error | null, res?: QueryResult) => {
        this.off('notice', onNotice);
        if (error && isDatabaseUnreachable(error)) {
          breaker.failed(error);
          if (error.message === 'Query read timeout') this.abandon();
          (error as unknown as Record<symbol, boolean>)[UNAVAILABLE] = true;
        } else {
          // Any answer, an error or a cancelled statement included, says the server is reachable.
          breaker.answered();
        }
        if (!error && unconfirmed) error = new CommitNotConfirmedError();
        settle(error, res);
      });
      return result;
    }

    /**
     * Drops the connection: its server may still answer the timed-out statement at any moment, so it
     * must never be handed out again. Every query queued on it fails, and the pool forgets it.
     */
    private abandon(): void {
      const self = this as unknown as { _queryable: boolean; connection: { stream: { destroy(): void } } };
      self._queryable = false;
      self.connection.stream.destroy();
    }
  } as unknown as typeof Client;
}

export interface DeadlineOptions {
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  /** Also bound statements on the server (statement_timeout); not for the embedded single session. */
  serverTimeouts: boolean;
}

/** node-postgres pool options that put the deadlines on every connection of the pool. */
export function deadlinePoolOptions(breaker: DatabaseBreaker, options: DeadlineOptions): Record<string, unknown> {
  return {
    Client: deadlineClient(breaker),
    connectionTimeoutMillis: options.connectTimeoutMs,
    query_timeout: options.queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    ...(options.serverTimeouts
      ? {
          statement_timeout: Math.max(100, options.queryTimeoutMs - 500),
          idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
        }
      : {}),
  };
}

/**
 * Runs `work` on one connection without statement deadlines, client or server side: migrations,
 * which may build indexes for minutes and wait for another node's migration lock. `run` executes SQL
 * on that same connection.
 */
export async function withoutDeadlines<T>(connection: unknown, run: (sql: string) => Promise<unknown>, work: () => Promise<T>): Promise<T> {
  const parameters = (connection as { connectionParameters?: { query_timeout?: unknown } }).connectionParameters;
  const saved = parameters?.query_timeout;
  if (parameters) parameters.query_timeout = false;
  try {
    await run('SET statement_timeout = 0');
    return await work();
  } finally {
    // Back to the value the connection started with, before the pool hands it to anyone else.
    await run('RESET statement_timeout').catch(() => undefined);
    if (parameters) parameters.query_timeout = saved;
  }
}
