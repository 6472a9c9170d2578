import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { UserSessionRepository } from './user-session.repository';

/**
 * Deletes UserSession rows ended longer ago than SessionRetention (contract 14). A session never
 * ended explicitly ended when it reached the absolute lifetime, and goes a retention after that; a
 * session that may still be in use is never deleted. UserLogout keeps the permanent record of every end.
 */
@Injectable()
export class SessionRetention {
  private readonly logger = new Logger('SessionRetention');

  constructor(
    private readonly sessions: UserSessionRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /** Deletes what is past retention now (by the Clock); answers how many rows went. */
  async purge(): Promise<number> {
    const horizon = new Date(this.clock.nowMs() - this.settings.sessionRetentionMs);
    const expiredBefore = new Date(horizon.getTime() - this.settings.sessionAbsoluteLifetimeMs);
    const deleted = await this.sessions.deleteEndedBefore(horizon, expiredBefore);
    if (deleted > 0) this.logger.log(`deleted ${deleted} sessions ended before ${horizon.toISOString()}`);
    return deleted;
  }
}
