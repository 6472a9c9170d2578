import { DynamicModule, Module, Type } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CaptureFlushScheduler } from './capture-flush.scheduler';
import { CaptureFlusher } from './capture-flusher.service';
import { CaptureQueueHealth } from './capture-queue-health.entity';
import { CaptureQueueHealthRepository } from './capture-queue-health.repository';
import { CAPTURE_SOURCE, CaptureSource } from './capture-source';

/**
 * The once-a-minute flush of the capture queues and its CaptureQueueHealth rows. It knows no table:
 * the folder that owns the tables hands it their CaptureSource (telemetry/, which imports this
 * module, never the other way round). Written to, never calls back.
 */
@Module({})
export class CaptureQueuesModule {
  /** The flush of what `source` (a provider exported by `sourceModule`) holds. */
  static forSource(sourceModule: Type, source: Type<CaptureSource>): DynamicModule {
    return {
      module: CaptureQueuesModule,
      imports: [TypeOrmModule.forFeature([CaptureQueueHealth]), sourceModule],
      providers: [CaptureQueueHealthRepository, { provide: CAPTURE_SOURCE, useExisting: source }, CaptureFlusher, CaptureFlushScheduler],
      exports: [CaptureFlusher],
    };
  }
}
