import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CaptureQueuesModule } from '../capture-queues/capture-queues.module';
import { ReadsModule } from '../reads/reads.module';
import { BusEventCapture } from './bus-event-capture.service';
import { PipelineTelemetry } from './pipeline-telemetry.service';
import { TelemetryMetrics } from './telemetry-metrics';
import { TelemetryReadsController } from './telemetry-reads.controller';
import { OpenTelemetryMetric } from './open-telemetry-metric.entity';
import { RedisConnectionEvent, RedisSentinelEvent } from './redis-event.entities';
import { ArchiverStagePerformanceCounter, CaseCreationStagePerformanceCounter } from './stage-performance-counter.entity';
import { ArchiverWarning, CaseCreationWarning, ModelInvokeWarning } from './warning.entities';

const TELEMETRY_ENTITIES = [
  ArchiverStagePerformanceCounter,
  CaseCreationStagePerformanceCounter,
  ArchiverWarning,
  CaseCreationWarning,
  ModelInvokeWarning,
  RedisConnectionEvent,
  RedisSentinelEvent,
  OpenTelemetryMetric,
];

/** Background-processing telemetry: the instrumentation API, its metrics, and the landlord reads. */
@Module({
  imports: [TypeOrmModule.forFeature(TELEMETRY_ENTITIES), CaptureQueuesModule, ReadsModule],
  controllers: [TelemetryReadsController],
  providers: [TelemetryMetrics, PipelineTelemetry, BusEventCapture],
  exports: [PipelineTelemetry, TelemetryMetrics],
})
export class TelemetryModule {}
