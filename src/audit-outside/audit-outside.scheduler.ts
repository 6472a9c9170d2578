import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { AfterListening } from '../common/after-listening';
import { AuditOutside } from './audit-outside.service';

/** Name of the hourly check in the scheduler registry (docs/decisions/0014). */
export const AUDIT_OUTSIDE_JOB = 'audit-outside';

/**
 * The check for rows outside the log (contract 18) at start, once the server listens (issue 33), and every hour. Thin: tests call
 * AuditOutside.check() directly. A check that cannot run (the database away) says so and waits for the next.
 */
@Injectable()
export class AuditOutsideScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('AuditLog');

  constructor(
    private readonly outside: AuditOutside,
    private readonly afterListening: AfterListening,
  ) {}

  onApplicationBootstrap(): void {
    this.afterListening.run(() => this.run());
  }

  @Cron(CronExpression.EVERY_HOUR, { name: AUDIT_OUTSIDE_JOB })
  async run(): Promise<void> {
    try {
      await this.outside.check();
    } catch (error) {
      this.logger.warn(`the check for rows outside the log could not run: ${(error as Error).message}`);
    }
  }
}
