import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { LogoutOutcomeId, LogoutReasonId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { RequestContext } from '../common/request-context';

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
  /** Who cut it, for an administrator revocation. */
  cutByUser?: string | null;
  message?: string | null;
}

/** Message on the SessionEnded channel: every node closes that user's open streams. */
export interface SessionEndedMessage {
  userRegistryId: number;
  at: number;
}

/**
 * Ends every session of a user: TokensValidFrom moves to now (read on every request, so every JWT
 * issued before is refused on its next request), the UserLogout row is written in the same
 * transaction, then every node is told to close that user's streams. API keys are untouched.
 */
@Injectable()
export class SessionRevocation {
  private readonly logger = new Logger('SessionRevocation');
  private readonly localListeners = new Set<(message: SessionEndedMessage) => void>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditWriter,
    private readonly bus: Bus,
    private readonly clock: Clock,
  ) {}

  /** Throws when the revocation cannot be written; nothing is then recorded as revoked. */
  async revokeAll(owner: SessionOwner, options: RevocationOptions): Promise<Date> {
    const now = this.clock.now();
    await this.dataSource.transaction(async (manager) => {
      await manager.query(`UPDATE "UserRegistry" SET "TokensValidFrom" = $2 WHERE "Id" = $1`, [owner.userRegistryId, now]);
      await this.audit.logout(
        {
          createdUser: owner.userName,
          userRegistryId: owner.userRegistryId,
          tenantRegistryId: owner.tenantRegistryId,
          reasonId: options.reasonId,
          outcomeId: LogoutOutcomeId.Revoked,
          context: options.context ?? null,
          sessionStartDate: options.sessionStartDate ?? null,
          cutByUser: options.cutByUser ?? null,
          message: options.message ?? null,
        },
        manager,
      );
    });
    await this.announceEnded(owner.userRegistryId);
    return now;
  }

  /**
   * Runs `listener` on this node for every end announced here, at once and even when the bus is
   * down (the bus message may never come back to this node then). Returns the function that stops it.
   */
  onEndedHere(listener: (message: SessionEndedMessage) => void): () => void {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  /** Tells every node (this one included) to close the user's streams; best effort, see the re-check. */
  async announceEnded(userRegistryId: number): Promise<void> {
    const message: SessionEndedMessage = { userRegistryId, at: this.clock.nowMs() };
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
