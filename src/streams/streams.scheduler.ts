import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppSettings, SETTINGS } from '../config/config.module';
import { StreamRegistry } from './stream-registry.service';

/** A comment line every 15 s keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** The scheduler registry's names of the two stream jobs. */
export const STREAM_HEARTBEAT_JOB = 'stream-heartbeat';
export const STREAM_RECHECK_JOB = 'stream-recheck';

/**
 * The stream jobs (docs/decisions/0014): named intervals added at boot, since the re-check period is a
 * setting (RevokedSessionCheckInterval) that no decorator can carry. Thin on purpose: tests call
 * StreamRegistry.recheck() directly.
 */
@Injectable()
export class StreamsScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly streams: StreamRegistry,
    private readonly scheduler: SchedulerRegistry,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(STREAM_HEARTBEAT_JOB, setInterval(() => this.streams.heartbeat(), HEARTBEAT_MS).unref());
    this.scheduler.addInterval(STREAM_RECHECK_JOB, setInterval(() => void this.streams.recheck(), this.settings.revokedSessionCheckMs).unref());
  }

  /** ScheduleModule clears them on shutdown too; this keeps a module closed alone from leaving them behind. */
  onModuleDestroy(): void {
    for (const job of [STREAM_HEARTBEAT_JOB, STREAM_RECHECK_JOB]) {
      if (this.scheduler.doesExist('interval', job)) this.scheduler.deleteInterval(job);
    }
  }
}
