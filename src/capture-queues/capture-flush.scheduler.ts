import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { CaptureFlusher } from './capture-flusher.service';

/** Once a minute (service.md 6); thin on purpose: tests call CaptureFlusher.flush() directly. */
export const FLUSH_INTERVAL_MS = 60_000;

@Injectable()
export class CaptureFlushScheduler implements BeforeApplicationShutdown {
  constructor(private readonly flusher: CaptureFlusher) {}

  @Interval('capture-flush', FLUSH_INTERVAL_MS)
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
