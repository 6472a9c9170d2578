import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { PasskeyChallenges } from './passkey-challenges';
import { PasskeyUsageWriter } from './passkey-usage.writer';

/** The scheduler registry's names of the passkey jobs. */
export const PASSKEY_CHALLENGE_PURGE_JOB = 'passkey-challenge-purge';
export const PASSKEY_USAGE_WRITE_JOB = 'passkey-usage-write';

/** Once a minute each (docs/decisions/0014). Thin on purpose: tests call the services directly. */
@Injectable()
export class PasskeysScheduler {
  constructor(
    private readonly challenges: PasskeyChallenges,
    private readonly usage: PasskeyUsageWriter,
  ) {}

  /** Expired challenges are forgotten (they are refused anyway; this keeps the table small). */
  @Interval(PASSKEY_CHALLENGE_PURGE_JOB, 60_000)
  async purgeChallenges(): Promise<void> {
    await this.challenges.purgeExpired();
  }

  /** LastUsedDate and its device, at most once a minute per passkey (contract 20). */
  @Interval(PASSKEY_USAGE_WRITE_JOB, 60_000)
  async writeUsage(): Promise<void> {
    await this.usage.flush();
  }
}
