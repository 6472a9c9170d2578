import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { BacklogFlags, DurableBacklog } from '../common/durable-backlog';
import { field, spoolPath } from '../common/json-lines-spool';
import { RequestContext, requestColumns } from '../common/request-context';
import { boundTexts } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isDatabaseUnavailable } from '../database/deadlines';
import { UserRegistryRepository } from '../users/user-registry.repository';
import { AUDIT_COLUMNS, CanonicalColumnName, ColumnKind } from '../audit-log/canonical';
import { NewUserLogin, UserLoginRepository } from './user-login.repository';
import { NewUserLogout, USER_LOGOUT_TEXT_BOUNDS, UserLogoutRepository } from './user-logout.repository';
import { messageOf } from '../common/errors';

/**
 * A UserLogin row as the sign-in gives it: the entity's columns (user-login.repository.ts) less those
 * the writer fills: the instant, and the request's addresses and agent from its context.
 */
export type UserLoginEntry = Omit<NewUserLogin, 'createdDate' | 'failureMessage' | keyof RequestContext> & {
  /** Only for FailureTypeId 7-10 (service.md 2.3); ignored otherwise. */
  failureMessage?: string | null;
  context: RequestContext;
};

/**
 * A UserLogout row as its callers give it: the entity's columns (user-logout.repository.ts) less the
 * request's addresses and agent, which come from its context (null: none, as for a purge).
 */
export type UserLogoutEntry = Omit<NewUserLogout, 'id' | 'createdDate' | 'cutByUser' | 'message' | keyof RequestContext> & {
  context: RequestContext | null;
  cutByUser?: string | null;
  message?: string | null;
  /** When it happened; default now. A row kept through an outage is written with its own instant. */
  createdDate?: Date;
  /**
   * Its Id, from the table's sequence, taken before its first attempt when not given; with
   * CreatedDate its identity, kept by every copy of it (LogoutIdentity).
   */
  id?: string | null;
};

/**
 * Who a UserLogout row is: (Id, CreatedDate), the table's primary key, given before the first attempt
 * to write it and kept by every later copy (the kept row, its spool line), so that a write whose
 * commit was in doubt (its answer lost, its COMMIT still waiting for a synchronous standby) and a
 * later write of the copy make one row: the second is skipped by the primary key. The Id is taken
 * from the sequence at the first attempt, inside its transaction, so it is known even when the
 * answer to that transaction never comes; it stays null while the database could not be reached,
 * and then nothing was written (docs/decisions/0025-logout-identity.md).
 */
export interface LogoutIdentity {
  createdDate: Date;
  id: string | null;
}

/** UserLogout rows kept in memory while they cannot be written; beyond this the newest are dropped and counted. */
export const AUDIT_RETRY_CAPACITY = 10_000;
/** Kept rows written per INSERT on recovery (12 parameters a row, far below PostgreSQL's 65535). */
const RETRY_BATCH = 500;

const PROVIDER_FAILURES = new Set([7, 8, 9, 10]);

/** A UserLogout row as it waits for the database, in memory and in the spool. */
type SpooledLogout = UserLogoutEntry & LogoutIdentity;
/**
 * `replayed` when an earlier run of this node kept it (that run may have written it): a row with an
 * Id is then written like any other (the primary key skips it if it is there), a row without one
 * (spooled by an older build) is checked against the table first. `onDisk` once the spool has it.
 */
type KeptLogout = SpooledLogout & BacklogFlags;

/**
 * Writes the permanent sign-in and sign-out trails through their repositories (which strip every text
 * of control characters and bound it, so a hostile user agent is stored as inert data), and keeps the
 * UserLogout rows that could not be written during an outage: in memory and in this node's spool on
 * disk (common/durable-backlog.ts), so a node killed before the database answers again writes them when it
 * starts. Callers await these before answering: the row exists (or is on disk) before the caller
 * learns the outcome.
 */
@Injectable()
export class AuditWriter implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Audit');
  /** Rows that could not be written when they happened, oldest first, each with its CreatedDate. */
  private readonly kept: DurableBacklog<KeptLogout, SpooledLogout>;
  private droppedCount = 0;
  private writing: Promise<number> | null = null;

  constructor(
    private readonly logins: UserLoginRepository,
    private readonly logouts: UserLogoutRepository,
    private readonly users: UserRegistryRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.kept = new DurableBacklog<KeptLogout, SpooledLogout>({
      path: spoolPath(settings.dataDirectory, settings.instance, 'UserLogout'),
      what: 'UserLogout rows',
      capacity: AUDIT_RETRY_CAPACITY,
      // The trail keeps the rows it already holds; the refused row is counted.
      whenFull: 'give-up-newest',
      onGivenUp: () => {
        this.droppedCount++;
        this.logger.error(`the queue of UserLogout rows waiting for the database is full (${AUDIT_RETRY_CAPACITY}): a row was dropped`);
      },
      // A logout is on disk before it is answered.
      spoolWhen: 'each-as-kept',
      rewriteKeeps: 'every-kept-row',
      toLine: spooled,
      parse: parseSpooledLogout,
    });
  }

  /**
   * Rows an earlier run of this node kept on disk and could not write go first in the queue, and are
   * written now if the database answers (else by the retry job). Each is checked against the table,
   * since that run may have written it and been killed before its spool said so.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (await this.kept.replay()) void this.writeKept();
  }

  /** After the last tries of the shutdown hooks (which may still spool what they cannot write). */
  async onApplicationShutdown(): Promise<void> {
    await this.kept.close();
  }

  /** Rows waiting to be written, and how many were dropped because the queue was full. */
  get pending(): { kept: number; dropped: number } {
    return { kept: this.kept.length, dropped: this.droppedCount };
  }

  /**
   * Writes a UserLogout row that must not be lost but need not hold up the answer (a logout answers
   * 200 whatever happens): now if the database answers, otherwise kept in a bounded queue and written
   * on recovery with the instant it happened. Never throws. Sign-in rows never come here: their rule
   * is "written before the answer, or no success".
   */
  async logoutEventually(entry: UserLogoutEntry): Promise<'written' | 'kept' | 'refused'> {
    const dated: KeptLogout = { ...entry, createdDate: entry.createdDate ?? this.clock.now(), id: entry.id ?? null };
    try {
      // Behind rows already waiting, so the trail keeps its order of writing as far as it can.
      if (this.kept.length === 0) {
        await this.logout(dated, undefined, dated);
        return 'written';
      }
    } catch (error) {
      // Tried and failed for the database's sake: it may have been committed all the same, and the
      // kept copy has its Id (LogoutIdentity), so writing it again is a no-op then.
      if (!isDatabaseUnavailable(error)) {
        // The database answered and refused this row: trying it again would fail again.
        this.logger.error(`a UserLogout row (user ${entry.userRegistryId ?? 'none'}) was refused by the database and is lost: ${messageOf(error)}`);
        return 'refused';
      }
    }
    await this.keep(dated);
    return 'kept';
  }

  /**
   * Writes the kept rows, oldest first, until the database stops answering (the rest waits for the
   * next try). A row the database refuses for itself (not an outage) is set aside with an ERROR, so it
   * never blocks the others. Returns how many were written.
   */
  writeKept(): Promise<number> {
    if (this.writing) return this.writing;
    this.writing = (async () => {
      await Promise.resolve();
      let written = 0;
      let settled = 0;
      try {
        // When the database still cannot be reached, the batch below fails the same way (or names its rows).
        await this.identifyKept().catch((error: unknown) => {
          if (!isDatabaseUnavailable(error)) this.logger.error(`cannot take Ids for the kept UserLogout rows: ${messageOf(error)}`);
        });
        while (this.kept.length > 0) {
          const batch = this.kept.oldest(RETRY_BATCH);
          try {
            await this.logoutKept(batch);
            written += batch.length;
            settled += batch.length;
            this.kept.settle(batch.length);
            continue;
          } catch (error) {
            // The INSERT may have been committed all the same (a commit not confirmed, a connection lost
            // during COMMIT): the rows keep their Ids, so the next try skips what it wrote.
            if (isDatabaseUnavailable(error)) break;
          }
          // The batch was refused for what it holds, not for an outage: row by row, setting aside the bad.
          const next = this.kept.oldest(1)[0];
          try {
            await this.logoutKept([next]);
            written++;
          } catch (error) {
            if (isDatabaseUnavailable(error)) break;
            this.droppedCount++;
            this.logger.error(`a kept UserLogout row (user ${next.userRegistryId ?? 'none'}, ${next.createdDate.toISOString()}) cannot be written and is dropped: ${messageOf(error)}`);
          }
          settled++;
          this.kept.settle(1);
        }
      } finally {
        // The spool holds what still waits (a crash before this line writes a replay, checked against the table).
        if (settled > 0) await this.kept.rewrite();
        this.writing = null;
      }
      if (written > 0) this.logger.warn(`wrote ${written} UserLogout rows kept during a database outage; ${this.kept.length} still waiting`);
      return written;
    })();
    return this.writing;
  }

  /** Says what could not be written (shutdown during an outage): kept on disk for the next start, or lost. */
  reportUnwritten(): void {
    const lost = this.kept.length - this.kept.onDisk;
    if (this.kept.length > lost) {
      this.logger.warn(`${this.kept.length - lost} UserLogout rows could not be written before shutdown; they are kept in ${this.kept.path} and written when this node starts again`);
    }
    if (lost > 0) this.logger.error(`${lost} UserLogout rows could not be written before shutdown nor kept on disk, and are lost`);
  }

  private async keep(entry: KeptLogout): Promise<void> {
    const { kept, onDisk } = this.kept.keep(entry);
    if (!kept) return;
    this.logger.warn('UserLogout rows cannot be written now: kept to write when the database answers again');
    await onDisk;
  }

  /** Writes a UserLogin row; inside `tx` when the sign-in writes it in its own transaction. */
  async login({ context, failureMessage, ...columns }: UserLoginEntry, tx?: EntityManager): Promise<void> {
    await this.logins.insert(
      {
        ...columns,
        createdDate: this.clock.now(),
        // Only a provider's failure (7-10) carries its message (service.md 2.3).
        failureMessage: columns.failureTypeId !== null && PROVIDER_FAILURES.has(columns.failureTypeId) ? (failureMessage ?? null) : null,
        ...requestColumns(context),
      },
      tx,
    );
  }

  /** A new row's identity: its instant now, its Id taken at its first attempt (LogoutIdentity). */
  identity(): LogoutIdentity {
    return { createdDate: this.clock.now(), id: null };
  }

  /**
   * Writes a UserLogout row; inside `tx` when the caller's transaction must hold it. `identity` (its
   * CreatedDate and Id) is filled in before the INSERT is sent, so the caller that keeps a copy of the
   * row when the answer does not come writes the same row (LogoutIdentity).
   */
  async logout(entry: UserLogoutEntry, tx?: EntityManager, identity: LogoutIdentity = { createdDate: entry.createdDate ?? this.clock.now(), id: entry.id ?? null }): Promise<void> {
    identity.id ??= (await this.logouts.reserveIds(1, tx))[0];
    await this.logouts.insert([this.logoutRow({ ...entry, ...identity })], tx);
  }

  /**
   * Gives every kept row without an Id one (rows kept while the database could not be reached),
   * before any of them is tried, and puts the Ids in the spool so a run killed after a write whose
   * answer it lost writes the same rows again. One query, one rewrite of the spool.
   */
  private async identifyKept(): Promise<void> {
    const unnamed = this.kept.oldest().filter((entry) => !entry.id && !entry.replayed);
    if (unnamed.length === 0) return;
    const ids = await this.logouts.reserveIds(unnamed.length);
    unnamed.forEach((entry, i) => (entry.id = ids[i]));
    if (unnamed.some((entry) => entry.onDisk)) await this.kept.rewrite();
  }

  /**
   * Writes kept rows in one INSERT. A row of a known user whose tenant could not be read when it
   * happened (the database was down) gets it from the user's role as it is written, so the tenant's
   * administrators see it like any other.
   */
  private async logoutKept(entries: KeptLogout[]): Promise<void> {
    // A row spooled by an older build has no Id: it is checked against the table (that build's run may
    // have written it) before it gets one. Every row is then written with its Id.
    const unnamed = entries.filter((entry) => !entry.id);
    const legacy = new Set(unnamed.filter((entry) => entry.replayed));
    const ids = await this.logouts.reserveIds(unnamed.length);
    unnamed.forEach((entry, i) => (entry.id = ids[i]));
    const unknown = entries.filter((e) => e.tenantRegistryId === null && e.userRegistryId !== null).map((e) => e.userRegistryId!);
    const tenants = await this.users.tenantsOf(unknown);
    const rows = entries.map((entry) => {
      const row = this.logoutRow(entry);
      if (row.tenantRegistryId === null && row.userRegistryId !== null) row.tenantRegistryId = tenants.get(row.userRegistryId) ?? null;
      return row;
    });
    // A replayed row may have been written by the run that kept it: written once, never twice.
    const written = await this.logouts.alreadyWritten(rows.filter((_, i) => legacy.has(entries[i])));
    await this.logouts.insert(rows.filter((row) => !written.has(row)));
  }

  /** The row of an entry: each of its own columns (LOGOUT_LINE), absent ones null, and its request's. */
  private logoutRow(entry: UserLogoutEntry & LogoutIdentity): NewUserLogout {
    const row: Record<string, unknown> = {};
    for (const { key } of LOGOUT_LINE) row[key] = entry[key] ?? null;
    return { ...(row as Omit<NewUserLogout, keyof RequestContext>), id: entry.id!, ...requestColumns(entry.context) };
  }
}

/** The UserLogout columns an entry carries itself: all but the request's, which travel in its context. */
type LogoutField = Exclude<Uncapitalize<CanonicalColumnName<'UserLogout'>>, keyof RequestContext>;

/** How a spooled value of each canonical kind reads back (a value of the wrong type reads as null). */
const READ_KIND: Record<ColumnKind, (value: unknown) => unknown> = {
  id: field.bigint,
  date: field.date,
  int: field.id,
  text: field.text,
  bool: (value) => (typeof value === 'boolean' ? value : null),
};

/**
 * Fields a line must have to be a row (a torn or foreign line has not): the table's NOT NULL columns
 * but the Id, absent from a line spooled by an older build (such a row is checked against the table
 * before it is written).
 */
const LOGOUT_LINE_REQUIRED: readonly LogoutField[] = ['createdDate', 'reasonId', 'outcomeId'];

/**
 * Each field of a spooled UserLogout line (the entry's own columns, in the canonical list's order)
 * and how it reads back, by its kind there: the line, the row written from it, its bounding and its
 * parser follow from that list, so a new column is kept through an outage without a change here.
 */
const LOGOUT_LINE: ReadonlyArray<{ key: LogoutField; read: (value: unknown) => unknown; required: boolean }> = AUDIT_COLUMNS.UserLogout.flatMap(
  ({ name, kind }) => {
    const key = (name.charAt(0).toLowerCase() + name.slice(1)) as Uncapitalize<typeof name>;
    if (key in requestColumns(null)) return [];
    return [{ key: key as LogoutField, read: READ_KIND[kind], required: LOGOUT_LINE_REQUIRED.includes(key as LogoutField) }];
  },
);
const CONTEXT_LINE: { [K in keyof RequestContext]-?: (value: unknown) => RequestContext[K] } = {
  remoteIp: field.text,
  localIp: field.text,
  userAgent: field.text,
};

/**
 * What the spool keeps of a row: the fields of LOGOUT_LINE, nothing about its place in the queue,
 * its texts bounded and stripped as the table will hold them (the spool is a store too: a hostile
 * user agent never reaches the disk whole).
 */
function spooled(row: KeptLogout): SpooledLogout {
  const line: Record<string, unknown> = {};
  for (const { key } of LOGOUT_LINE) line[key] = row[key] ?? null;
  line.context = row.context && boundTexts(pick(row.context), USER_LOGOUT_TEXT_BOUNDS);
  return boundTexts(line, USER_LOGOUT_TEXT_BOUNDS) as unknown as SpooledLogout;
}

/** One spooled line back into a row (its texts bounded again), or null when it is not one (a torn or foreign line). */
function parseSpooledLogout(raw: Record<string, unknown>): SpooledLogout | null {
  const row: Record<string, unknown> = {};
  for (const { key, read, required } of LOGOUT_LINE) {
    row[key] = read(raw[key]);
    if (required && row[key] === null) return null;
  }
  const context = typeof raw.context === 'object' && raw.context !== null ? (raw.context as Record<string, unknown>) : null;
  row.context = context && boundTexts(pick(context), USER_LOGOUT_TEXT_BOUNDS);
  return boundTexts(row, USER_LOGOUT_TEXT_BOUNDS) as unknown as SpooledLogout;
}

/** The fields of CONTEXT_LINE of `context`, each read as its reader says. */
function pick(context: object): RequestContext {
  const values = context as Record<string, unknown>;
  return Object.fromEntries(Object.entries(CONTEXT_LINE).map(([key, read]) => [key, read(values[key])])) as unknown as RequestContext;
}
