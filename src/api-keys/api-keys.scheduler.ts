import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { ActiveApiKeys } from './active-api-keys';
import { ApiKeyUsageWriter } from './api-key-usage.writer';

/** The scheduler registry's name of the once-a-minute reload of the active set. */
export const API_KEY_SET_RELOAD_JOB = 'api-key-set-reload';
/** The scheduler registry's name of the once-a-minute LastUsedDate write. */
export const API_KEY_USAGE_JOB = 'api-key-usage-write';

/**
 * The API-key jobs (docs/decisions/0014). Thin on purpose: tests call ActiveApiKeys.reload() and
 * ApiKeyUsageWriter.flush() directly.
 */
@Injectable()
export class ApiKeysScheduler {
  constructor(
    private readonly keys: ActiveApiKeys,
    private readonly usage: ApiKeyUsageWriter,
  ) {}

  /** The once-a-minute fallback for lost bus messages, on the minute; a failed reload keeps the current set. */
  @Cron(CronExpression.EVERY_MINUTE, { name: API_KEY_SET_RELOAD_JOB, waitForCompletion: true })
  async reload(): Promise<void> {
    await this.keys.reload().catch(() => undefined);
  }

  /** Once a minute, on the minute: the uses noted since the previous write. */
  @Cron(CronExpression.EVERY_MINUTE, { name: API_KEY_USAGE_JOB, waitForCompletion: true })
  async writeUsage(): Promise<void> {
    await this.usage.flush();
  }
}
