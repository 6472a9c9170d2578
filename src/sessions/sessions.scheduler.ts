import { Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import { AnonymousLogoutLimiter } from './anonymous-logout.limiter';
import { SessionRetention } from '../session-store/session-retention.service';

/** The scheduler registry's name of the daily purge of ended sessions. */
export const SESSION_RETENTION_JOB = 'session-retention';
/** The scheduler registry's name of the once-a-minute purge of AnonymousLogout addresses. */
export const ANONYMOUS_LOGOUT_PURGE_JOB = 'anonymous-logout-purge';

/**
 * The session jobs (docs/decisions/0014). Thin on purpose: tests call SessionRetention.purge() and
 * AnonymousLogoutLimiter.purge() directly.
 */
@Injectable()
export class SessionsScheduler {
  private readonly logger = new Logger('SessionRetention');

  constructor(
    private readonly retention: SessionRetention,
    private readonly anonymousLogouts: AnonymousLogoutLimiter,
  ) {}

  /** Daily. Every node may run it: a delete is idempotent. */
  @Cron(CronExpression.EVERY_DAY_AT_3AM, { name: SESSION_RETENTION_JOB })
  async purgeEndedSessions(): Promise<void> {
    try {
      await this.retention.purge();
    } catch (error) {
      this.logger.error(`the daily purge of ended sessions failed, tomorrow's will catch up: ${(error as Error).message}`);
    }
  }

  @Interval(ANONYMOUS_LOGOUT_PURGE_JOB, 60_000)
  async purgeAnonymousLogouts(): Promise<void> {
    await this.anonymousLogouts.purge();
  }
}
