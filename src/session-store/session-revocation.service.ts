import { Inject, Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { LogoutOutcomeId, LogoutReasonId } from '../sign-in-trail/audit.types';
import { AuditWriter, LogoutIdentity } from '../sign-in-trail/audit.writer';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { RequestContext } from '../common/request-context';
import { UserRegistryRepository } from '../users/user-registry.repository';
import { UserSessionRepository } from './user-session.repository';

/** The user whose sessions are cut. */
export interface SessionOwner {
  userRegistryId: number;
  userName: string;
  tenantRegistryId: number | null;
}

export interface RevocationOptions {
  reasonId: LogoutReasonId;
  context?: RequestContext | null;
  /** When the cut session began (logout of a known session). */
  sessionStartDate?: Date | null;
  /** Who cut it, for an administrator revocation; the user themself when absent. */
  cutByUser?: string | null;
  message?: string | null;
  /**
   * The UserLogout row's identity, filled in before its INSERT is sent: a caller that records the
   * failure of a revocation whose commit is in doubt writes its row as this same row (written once).
   * Its CreatedDate is the revocation's instant.
   */
  identity?: LogoutIdentity;
  /**
   * Runs inside the revocation's transaction (the AdminChange of an administrator's revocation, contract
   * 18), told the user's TokensValidFrom before and after, read under the row lock.
   */
  inTransaction?: (tx: EntityManager, tokensValidFrom: { before: Date | null; after: Date }) => Promise<void>;
}

/**
 * Message on the SessionEnded channel: every node closes that user's open streams, or only those of
 * one session when `sessionId` is given.
 */
export interface SessionEndedMessage {
  userRegistryId: number;
  sessionId?: string;
  at: number;
}

/** Who ends one session, and from where (for the UserLogout row). */
export interface SessionEnder {
  userName: string;
  context: RequestContext | null;
  /** Runs inside the transaction that ends the session, once it did (its AdminChange SessionEnded, contract 18). */
  inTransaction?: (tx: EntityManager) => Promise<void>;
}

/**
 * Ends sessions. All of a user's: TokensValidFrom moves to now (read on every request, so every JWT
 * issued before is refused on its next request) and every open UserSession row ends; one session:
 * its UserSession row ends (checked on every request with the user row). Either way the UserLogout
 * row is written in the same transaction, then every node is told to close the streams concerned.
 * API keys are untouched: they have no sessions.
 */
@Injectable()
export class SessionRevocation {
  private readonly logger = new Logger('SessionRevocation');
  private readonly localListeners = new Set<(message: SessionEndedMessage) => void>();

  constructor(
    private readonly transactions: Transactions,
    private readonly sessions: UserSessionRepository,
    private readonly users: UserRegistryRepository,
    private readonly audit: AuditWriter,
    private readonly bus: Bus,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /**
   * Throws when the revocation cannot be written; nothing is then recorded as revoked. The UserLogout
   * row names when the cut session began: the one given (a logout knows its own session), else the
   * earliest of the sessions still alive that this ended, with their number in Message when there
   * were several; null when none was open (a forced password change at sign-in, say).
   */
  async revokeAll(owner: SessionOwner, options: RevocationOptions): Promise<Date> {
    const identity = options.identity ?? this.audit.identity();
    const now = identity.createdDate;
    // Whoever ended the sessions (contract 14): the administrator, else the user themself.
    const endedBy = options.cutByUser ?? owner.userName;
    await this.transactions.runChange(async (manager) => {
      const previous = await this.users.revokeTokens(owner.userRegistryId, now, manager);
      const starts = await this.sessions.endAllOf(owner.userRegistryId, options.reasonId, endedBy, now, manager);
      // Rows past the absolute lifetime were no longer sessions; they are closed, not counted.
      const alive = starts.filter((start) => now.getTime() - start.getTime() < this.settings.sessionAbsoluteLifetimeMs).sort((a, b) => a.getTime() - b.getTime());
      const sessionStartDate = options.sessionStartDate ?? alive[0] ?? null;
      const message = options.message ?? (alive.length > 1 ? `${alive.length} sessions ended; the session start is the earliest.` : null);
      await this.audit.logout(
        {
          createdUser: owner.userName,
          userRegistryId: owner.userRegistryId,
          tenantRegistryId: owner.tenantRegistryId,
          reasonId: options.reasonId,
          outcomeId: LogoutOutcomeId.Revoked,
          context: options.context ?? null,
          sessionStartDate,
          cutByUser: endedBy,
          message,
        },
        manager,
        identity,
      );
      await options.inTransaction?.(manager, { before: previous, after: now });
    });
    await this.announceEnded(owner.userRegistryId);
    return now;
  }

  /**
   * Ends one open session of `owner` (contract 14): EndedDate, EndReasonId 4 and EndedByUser, the
   * UserLogout row (ReasonId 4, OutcomeId 1, the session's start, CutByUser) in the same transaction,
   * then that session's streams closed on every node. False when the user has no such open session.
   */
  async endOne(owner: SessionOwner, sessionId: string, by: SessionEnder): Promise<boolean> {
    const now = this.clock.now();
    const ended = await this.transactions.runChange(async (manager) => {
      const session = await this.sessions.endOne(sessionId, owner.userRegistryId, by.userName, now, manager);
      if (!session) return null;
      await this.audit.logout(
        {
          createdUser: owner.userName,
          userRegistryId: owner.userRegistryId,
          tenantRegistryId: owner.tenantRegistryId ?? session.tenantRegistryId,
          reasonId: LogoutReasonId.SessionEnded,
          outcomeId: LogoutOutcomeId.Revoked,
          context: by.context,
          sessionStartDate: session.createdDate,
          cutByUser: by.userName,
        },
        manager,
      );
      await by.inTransaction?.(manager);
      return session;
    });
    if (!ended) return false;
    await this.announceEnded(owner.userRegistryId, sessionId);
    return true;
  }

  /**
   * Runs `listener` on this node for every end announced here, at once and even when the bus is
   * down (the bus message may never come back to this node then). Returns the function that stops it.
   */
  onEndedHere(listener: (message: SessionEndedMessage) => void): () => void {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  /**
   * Tells every node (this one included) to close the user's streams, or one session's; best effort,
   * see the re-check.
   */
  async announceEnded(userRegistryId: number, sessionId?: string): Promise<void> {
    const message: SessionEndedMessage = { userRegistryId, ...(sessionId ? { sessionId } : {}), at: this.clock.nowMs() };
    for (const listener of this.localListeners) {
      try {
        listener(message);
      } catch (error) {
        this.logger.warn(`a local session-end listener failed: ${(error as Error).message}`);
      }
    }
    try {
      await this.bus.publish(CHANNELS.sessionEnded, JSON.stringify(message));
    } catch (error) {
      this.logger.warn(`could not announce the end of sessions of user ${userRegistryId}: ${(error as Error).message}`);
    }
  }
}
