import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { RequestContext } from '../common/request-context';
import { BOUNDS, boundText } from '../common/text';
import { isDatabaseUnavailable } from '../database/deadlines';
import { AuthenticationTypeId, FailureTypeId, LogoutOutcomeId, LogoutReasonId } from './audit.types';

export interface UserLoginEntry {
  createdUser: string | null;
  userRegistryId: number | null;
  tenantRegistryId: number | null;
  authenticationTypeId: AuthenticationTypeId;
  failureTypeId: FailureTypeId | null;
  /** Only for FailureTypeId 7-10 (service.md 2.3); ignored otherwise. */
  failureMessage?: string | null;
  context: RequestContext;
}

export interface UserLogoutEntry {
  createdUser: string | null;
  userRegistryId: number | null;
  tenantRegistryId: number | null;
  reasonId: LogoutReasonId;
  outcomeId: LogoutOutcomeId;
  context: RequestContext | null;
  sessionStartDate: Date | null;
  cutByUser?: string | null;
  message?: string | null;
  /** When it happened; default now. A row kept through an outage is written with its own instant. */
  createdDate?: Date;
}

/** UserLogout rows kept in memory while they cannot be written; beyond this the newest are dropped and counted. */
export const AUDIT_RETRY_CAPACITY = 10_000;
/** Kept rows written per INSERT on recovery. */
const RETRY_BATCH = 500;

const PROVIDER_FAILURES = new Set([7, 8, 9, 10]);

/**
 * Writes the permanent sign-in and sign-out trails. Every text is stripped of control characters and
 * bounded before it is written, so a hostile user agent is stored as inert data. Callers await these
 * before answering: the row exists before the caller learns the outcome.
 */
@Injectable()
export class AuditWriter {
  private readonly logger = new Logger('Audit');
  /** Rows that could not be written when they happened, oldest first, each with its CreatedDate. */
  private readonly kept: Array<UserLogoutEntry & { createdDate: Date }> = [];
  private droppedCount = 0;
  private writing: Promise<number> | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

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
    const dated = { ...entry, createdDate: entry.createdDate ?? this.clock.now() };
    try {
      // Behind rows already waiting, so the trail keeps its order of writing as far as it can.
      if (this.kept.length === 0) {
        await this.logout(dated);
        return 'written';
      }
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        // The database answered and refused this row: trying it again would fail again.
        this.logger.error(`a UserLogout row (user ${entry.userRegistryId ?? 'none'}) was refused by the database and is lost: ${messageOf(error)}`);
        return 'refused';
      }
    }
    this.keep(dated);
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
      try {
        while (this.kept.length > 0) {
          const batch = this.kept.slice(0, RETRY_BATCH);
          try {
            await this.logoutRows(batch, true);
            written += batch.length;
            this.kept.splice(0, batch.length);
            continue;
          } catch (error) {
            if (isDatabaseUnavailable(error)) break;
          }
          // The batch was refused for what it holds, not for an outage: row by row, setting aside the bad.
          const next = this.kept[0];
          try {
            await this.logout(next);
            written++;
          } catch (error) {
            if (isDatabaseUnavailable(error)) break;
            this.droppedCount++;
            this.logger.error(`a kept UserLogout row (user ${next.userRegistryId ?? 'none'}, ${next.createdDate.toISOString()}) cannot be written and is dropped: ${messageOf(error)}`);
          }
          this.kept.shift();
        }
      } finally {
        this.writing = null;
      }
      if (written > 0) this.logger.warn(`wrote ${written} UserLogout rows kept during a database outage; ${this.kept.length} still waiting`);
      return written;
    })();
    return this.writing;
  }

  /** Says what could not be written at all (shutdown during an outage). */
  reportUnwritten(): void {
    if (this.kept.length > 0) this.logger.error(`${this.kept.length} UserLogout rows could not be written before shutdown and are lost`);
  }

  private keep(entry: UserLogoutEntry & { createdDate: Date }): void {
    if (this.kept.length >= AUDIT_RETRY_CAPACITY) {
      this.droppedCount++;
      this.logger.error(`the queue of UserLogout rows waiting for the database is full (${AUDIT_RETRY_CAPACITY}): a row was dropped`);
      return;
    }
    this.kept.push(entry);
    this.logger.warn('UserLogout rows cannot be written now: kept to write when the database answers again');
  }

  async login(entry: UserLoginEntry, manager: EntityManager = this.dataSource.manager): Promise<void> {
    const failureMessage =
      entry.failureTypeId !== null && PROVIDER_FAILURES.has(entry.failureTypeId)
        ? boundText(entry.failureMessage ?? null, BOUNDS.failureMessage)
        : null;
    await manager.query(
      `INSERT INTO "UserLogin" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "AuthenticationTypeId",
                                "Failed", "FailureTypeId", "FailureMessage", "RemoteIp", "LocalIp", "UserAgent")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        this.clock.now(),
        boundText(entry.createdUser, BOUNDS.name),
        entry.userRegistryId,
        entry.tenantRegistryId,
        entry.authenticationTypeId,
        entry.failureTypeId !== null,
        entry.failureTypeId,
        failureMessage,
        boundText(entry.context.remoteIp, BOUNDS.ip),
        boundText(entry.context.localIp, BOUNDS.ip),
        boundText(entry.context.userAgent, BOUNDS.userAgent),
      ],
    );
  }

  async logout(entry: UserLogoutEntry, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await this.logoutRows([entry], false, manager);
  }

  /**
   * One INSERT for the rows. With `tenantOfUser`, a row of a known user whose tenant could not be read
   * when it happened (the database was down) gets it from the user's role as it is written, so the
   * tenant's administrators see it like any other.
   */
  private async logoutRows(entries: UserLogoutEntry[], tenantOfUser: boolean, manager: EntityManager = this.dataSource.manager): Promise<void> {
    const values: unknown[] = [];
    const rows = entries.map((entry) => {
      const p = values.length;
      values.push(...this.logoutValues(entry));
      const $ = (i: number) => `$${p + i}`;
      const tenant = tenantOfUser
        ? `coalesce(${$(4)}::int, (SELECT r."TenantRegistryId" FROM "UserRegistry" u JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
                                   WHERE u."Id" = ${$(3)}::int))`
        : `${$(4)}::int`;
      return `(${$(1)}::timestamptz, ${$(2)}, ${$(3)}::int, ${tenant},
               ${$(5)}::smallint, ${$(6)}::smallint, ${$(7)}, ${$(8)}, ${$(9)}, ${$(10)}::timestamptz, ${$(11)}, ${$(12)})`;
    });
    await manager.query(
      `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId",
                                 "RemoteIp", "LocalIp", "UserAgent", "SessionStartDate", "CutByUser", "Message")
       VALUES ${rows.join(', ')}`,
      values,
    );
  }

  private logoutValues(entry: UserLogoutEntry): unknown[] {
    return [
      entry.createdDate ?? this.clock.now(),
      boundText(entry.createdUser, BOUNDS.name),
      entry.userRegistryId,
      entry.tenantRegistryId,
      entry.reasonId,
      entry.outcomeId,
      boundText(entry.context?.remoteIp ?? null, BOUNDS.ip),
      boundText(entry.context?.localIp ?? null, BOUNDS.ip),
      boundText(entry.context?.userAgent ?? null, BOUNDS.userAgent),
      entry.sessionStartDate,
      boundText(entry.cutByUser ?? null, BOUNDS.name),
      boundText(entry.message ?? null, BOUNDS.message),
    ];
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
