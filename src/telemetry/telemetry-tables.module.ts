import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CaptureQueues } from './capture-queues.service';
import { CaptureRows } from './capture-rows';
import { ArchiverWarningMinute } from './telemetry-rollup.entities';
import { CAPTURED_TABLES } from './telemetry.tables';

/**
 * The captured telemetry tables (contract 10): their entities (from their descriptions), their
 * queues, and how the capture flush writes them (CaptureRows, the flush's CaptureSource). The
 * CaptureQueueHealth entity is the flush's own (capture-queues/).
 */
@Module({
  imports: [TypeOrmModule.forFeature([...CAPTURED_TABLES.map((table) => table.entity), ArchiverWarningMinute])],
  providers: [CaptureQueues, CaptureRows],
  exports: [CaptureQueues, CaptureRows],
})
export class TelemetryTablesModule {}
