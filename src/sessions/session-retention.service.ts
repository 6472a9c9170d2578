import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
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

/** Daily; thin on purpose: tests call SessionRetention.purge() directly. Every node may run it: a delete is idempotent. */
@Injectable()
export class SessionRetentionScheduler {
  private readonly logger = new Logger('SessionRetention');

  constructor(private readonly retention: SessionRetention) {}

  @Cron(CronExpression.EVERY_DAY_AT_3AM, { name: 'session-retention' })
  async daily(): Promise<void> {
    try {
      await this.retention.purge();
    } catch (error) {
      this.logger.error(`the daily purge of ended sessions failed, tomorrow's will catch up: ${(error as Error).message}`);
    }
  }
}
