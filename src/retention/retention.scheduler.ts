import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { PartitionMaintenance } from './partition-maintenance.service';
import { messageOf } from '../common/errors';

/** The scheduler registry's name of the daily partition and retention job. */
export const PARTITION_RETENTION_JOB = 'partition-retention';

/**
 * At start: the partitions ahead are made before the first request (cheap when none is missing), then
 * retention runs once in the background. Then daily. Thin on purpose: tests call PartitionMaintenance
 * directly, with the clock where they want it.
 */
@Injectable()
export class RetentionScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('Retention');

  constructor(private readonly maintenance: PartitionMaintenance) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      await this.maintenance.ensurePartitions();
    } catch (error) {
      // Rows still land in DEFAULT; never a reason not to start.
      this.logger.error(`partitions ahead could not be made at start, the daily run will: ${messageOf(error)}`);
    }
    // Not awaited: an audit drop waits for its record to be sealed, by a job that starts after bootstrap.
    void this.daily();
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
