import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SessionActivityWriter } from './session-activity.writer';

/** The scheduler registry's name of the write job. */
export const SESSION_ACTIVITY_JOB = 'session-activity-write';

/**
 * Every second, the LastSeenDate values noted since the previous write (docs/decisions/0014). Thin on
 * purpose: tests call SessionActivityWriter.flush() directly.
 */
@Injectable()
export class SessionActivityScheduler {
  constructor(private readonly activity: SessionActivityWriter) {}

  @Interval(SESSION_ACTIVITY_JOB, 1_000)
  async write(): Promise<void> {
    await this.activity.flush();
  }
}
