import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { CaptureFlusher } from './capture-flusher.service';

/** The scheduler registry's name of the flush job. */
export const CAPTURE_FLUSH_JOB = 'capture-flush';

/**
 * Once a minute, on the minute (service.md 6), one job flushes the six queues together, in one
 * transaction with their six CaptureQueueHealth rows, so each minute's health timeline is one
 * snapshot. Thin on purpose: tests call CaptureFlusher.flush() directly.
 */
@Injectable()
export class CaptureFlushScheduler implements BeforeApplicationShutdown {
  constructor(private readonly flusher: CaptureFlusher) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: CAPTURE_FLUSH_JOB, waitForCompletion: true })
  async tick(): Promise<void> {
    // A flush still running (a slow database) is not overlapped; the next tick catches up.
    if (this.flusher.busy) return;
    await this.flusher.flush();
  }

  /** What is still queued is written before the database connection closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flusher.flush().catch(() => undefined);
  }
}
