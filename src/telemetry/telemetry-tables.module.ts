import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OpenTelemetryMetric } from './open-telemetry-metric.entity';
import { OpenTelemetryMetricRepository } from './open-telemetry-metric.repository';
import { RedisConnectionEvent, RedisSentinelEvent } from './redis-event.entities';
import { RedisConnectionEventRepository, RedisSentinelEventRepository } from './redis-event.repositories';
import { ArchiverStagePerformanceCounter, CaseCreationStagePerformanceCounter } from './stage-performance-counter.entities';
import { ArchiverStagePerformanceCounterRepository, CaseCreationStagePerformanceCounterRepository } from './stage-performance-counter.repositories';
import { ArchiverWarningMinute } from './telemetry-rollup.entities';
import { ArchiverWarning, CaseCreationWarning, ModelInvokeWarning } from './warning.entities';
import { ArchiverWarningRepository, CaseCreationWarningRepository, ModelInvokeWarningRepository } from './warning.repositories';

const REPOSITORIES = [
  ArchiverStagePerformanceCounterRepository,
  CaseCreationStagePerformanceCounterRepository,
  ArchiverWarningRepository,
  CaseCreationWarningRepository,
  ModelInvokeWarningRepository,
  RedisConnectionEventRepository,
  RedisSentinelEventRepository,
  OpenTelemetryMetricRepository,
];

/**
 * The telemetry tables (contract 10): their entities and repositories. Imported by the capture flush,
 * which writes them; the reads describe them in telemetry.tables.ts for the read engine.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      ArchiverStagePerformanceCounter,
      CaseCreationStagePerformanceCounter,
      ArchiverWarning,
      ArchiverWarningMinute,
      CaseCreationWarning,
      ModelInvokeWarning,
      RedisConnectionEvent,
      RedisSentinelEvent,
      OpenTelemetryMetric,
    ]),
  ],
  providers: REPOSITORIES,
  exports: REPOSITORIES,
})
export class TelemetryTablesModule {}
