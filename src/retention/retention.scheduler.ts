import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { PartitionMaintenance } from './partition-maintenance.service';
import { AfterListening } from '../common/after-listening';
import { messageOf } from '../common/errors';

/** The scheduler registry's name of the daily partition and retention job. */
export const PARTITION_RETENTION_JOB = 'partition-retention';

/**
 * At start, once the server listens: the daily run (partitions ahead, DEFAULT emptied, expired
 * partitions dropped). No request waits for it: rows dated where no partition is yet land in DEFAULT
 * and this run moves them (issue 33: it used to make the partitions before listening, then run again).
 * Then daily. Thin on purpose: tests call PartitionMaintenance directly, with the clock where they want it.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('Retention');

  constructor(
    private readonly maintenance: PartitionMaintenance,
    private readonly afterListening: AfterListening,
  ) {}

  onApplicationBootstrap(): void {
    // An audit drop waits for its record to be sealed, by a job that starts after bootstrap.
    this.afterListening.run(() => this.daily());
  }

  @Cron(CronExpression.EVERY_DAY_AT_1AM, { name: PARTITION_RETENTION_JOB, waitForCompletion: true })
  async daily(): Promise<void> {
    try {
      await this.maintenance.applyRetention();
    } catch (error) {
      this.logger.error(`the partition and retention run failed, the next one will catch up: ${messageOf(error)}`);
    }
  }
}
