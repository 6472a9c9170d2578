import { Module } from '@nestjs/common';
import { CaptureQueuesModule } from '../capture-queues/capture-queues.module';
import { ReadsModule } from '../reads/reads.module';
import { BusEventCapture } from './bus-event-capture.service';
import { CaptureRows } from './capture-rows';
import { PipelineTelemetry } from './pipeline-telemetry.service';
import { TelemetryMetrics } from './telemetry-metrics';
import { TelemetryReadsController } from './telemetry-reads.controller';
import { TelemetryTablesModule } from './telemetry-tables.module';

/** Background-processing telemetry: the instrumentation API, its metrics, its queues' flush, and the landlord reads. */
@Module({
  imports: [TelemetryTablesModule, CaptureQueuesModule.forSource(TelemetryTablesModule, CaptureRows), ReadsModule],
  controllers: [TelemetryReadsController],
  providers: [TelemetryMetrics, PipelineTelemetry, BusEventCapture],
  exports: [PipelineTelemetry, TelemetryMetrics],
})
export class TelemetryModule {}
