import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CaptureFlushScheduler } from './capture-flush.scheduler';
import { CaptureFlusher } from './capture-flusher.service';
import { CaptureRows } from '../telemetry/capture-rows';
import { TelemetryTablesModule } from '../telemetry/telemetry-tables.module';
import { CaptureQueueHealth } from './capture-queue-health.entity';
import { CaptureQueueHealthRepository } from './capture-queue-health.repository';
import { CaptureQueues } from '../telemetry/capture-queues.service';

/** The six bounded capture queues and their once-a-minute flush. Written to, never calls back. */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([CaptureQueueHealth]), TelemetryTablesModule],
  providers: [CaptureQueueHealthRepository, CaptureQueues, CaptureRows, CaptureFlusher, CaptureFlushScheduler],
  exports: [CaptureQueues, CaptureFlusher],
})
export class CaptureQueuesModule {}
