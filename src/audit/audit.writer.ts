import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { RequestContext } from '../common/request-context';
import { BOUNDS, boundText } from '../common/text';
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
}

const PROVIDER_FAILURES = new Set([7, 8, 9, 10]);

/**
 * Writes the permanent sign-in and sign-out trails. Every text is stripped of control characters and
 * bounded before it is written, so a hostile user agent is stored as inert data. Callers await these
 * before answering: the row exists before the caller learns the outcome.
 */
@Injectable()
export class AuditWriter {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly clock: Clock,
  ) {}

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
    await manager.query(
      `INSERT INTO "UserLogout" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "ReasonId", "OutcomeId",
                                 "RemoteIp", "LocalIp", "UserAgent", "SessionStartDate", "CutByUser", "Message")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        this.clock.now(),
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
      ],
    );
  }
}
