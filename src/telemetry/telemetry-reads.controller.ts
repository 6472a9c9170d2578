import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiExtraModels, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { GridReads } from '../reads/grid-read.service';
import { ColumnStatisticsDto, GridReadDocs, SeriesDocs } from '../reads/read-docs';
import { SeriesAnswer } from '../reads/series-sql';
import * as T from './telemetry.tables';

/**
 * The background-processing telemetry reads (service.md 4.3, contract 10): landlord only, one line
 * each; the table descriptions in telemetry.tables.ts say everything else.
 */
@ApiTags('Telemetry')
@ApiExtraModels(ColumnStatisticsDto)
@Authenticated({ landlord: true })
@Controller('api')
export class TelemetryReadsController {
  constructor(private readonly reads: GridReads) {}

  @Get('ArchiverStagePerformanceCounter')
  @GridReadDocs(T.ARCHIVER_STAGE_COUNTER_TABLE, 'Archiver stage counters per model, about one row per stage per minute.')
  archiverStageCounter(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.ARCHIVER_STAGE_COUNTER_TABLE, req, res, p);
  }

  @Get('ArchiverWarning')
  @GridReadDocs(T.ARCHIVER_WARNING_TABLE, 'Archiver stage invocations slower than ArchiverWarnThresholdMilliseconds.')
  archiverWarning(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.ARCHIVER_WARNING_TABLE, req, res, p);
  }

  @Get('CaseCreationStagePerformanceCounter')
  @GridReadDocs(T.CASE_CREATION_STAGE_COUNTER_TABLE, 'Case creation stage counters (global), about one row per stage per minute.')
  caseCreationStageCounter(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.CASE_CREATION_STAGE_COUNTER_TABLE, req, res, p);
  }

  @Get('CaseCreationWarning')
  @GridReadDocs(T.CASE_CREATION_WARNING_TABLE, 'Case creation stage invocations slower than CaseCreationWarnThresholdMilliseconds.')
  caseCreationWarning(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.CASE_CREATION_WARNING_TABLE, req, res, p);
  }

  @Get('ModelInvokeWarning')
  @GridReadDocs(T.MODEL_INVOKE_WARNING_TABLE, "Trace points slower than the model's warn threshold; from/to bound OccurredDate.")
  modelInvokeWarning(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.MODEL_INVOKE_WARNING_TABLE, req, res, p);
  }

  @Get('CaptureQueueHealth')
  @GridReadDocs(T.CAPTURE_QUEUE_HEALTH_TABLE, 'One row per capture queue per minute: depth at flush and entries dropped.')
  captureQueueHealth(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.CAPTURE_QUEUE_HEALTH_TABLE, req, res, p);
  }

  @Get('RedisConnectionEvent')
  @GridReadDocs(T.REDIS_CONNECTION_EVENT_TABLE, 'Connection events of the Redis client.')
  redisConnectionEvent(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.REDIS_CONNECTION_EVENT_TABLE, req, res, p);
  }

  @Get('RedisSentinelEvent')
  @GridReadDocs(T.REDIS_SENTINEL_EVENT_TABLE, 'Events of the Redis Sentinels (a master down, a failover, the new master), as each node read them.')
  redisSentinelEvent(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.REDIS_SENTINEL_EVENT_TABLE, req, res, p);
  }

  @Get('OpenTelemetryMetric')
  @GridReadDocs(T.OPEN_TELEMETRY_METRIC_TABLE, 'Per-minute aggregates of every instrument series (name + tags).')
  openTelemetryMetric(@Req() req: Request, @Res() res: Response, @CurrentPrincipal() p: Principal): Promise<void> {
    return this.reads.answer(T.OPEN_TELEMETRY_METRIC_TABLE, req, res, p);
  }

  // The series beside each read (contract 17): the same description, bucketed and grouped in PostgreSQL.

  @Get('ArchiverStagePerformanceCounter/Series')
  @SeriesDocs(T.ARCHIVER_STAGE_COUNTER_TABLE, 'ArchiverStagePerformanceCounter over time: points per bucket, optionally one series per group.')
  archiverStageCounterSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.ARCHIVER_STAGE_COUNTER_TABLE, req, p);
  }

  @Get('ArchiverWarning/Series')
  @SeriesDocs(T.ARCHIVER_WARNING_TABLE, 'ArchiverWarning over time: points per bucket, optionally one series per group.')
  archiverWarningSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.ARCHIVER_WARNING_TABLE, req, p);
  }

  @Get('CaseCreationStagePerformanceCounter/Series')
  @SeriesDocs(T.CASE_CREATION_STAGE_COUNTER_TABLE, 'CaseCreationStagePerformanceCounter over time: points per bucket, optionally one series per group.')
  caseCreationStageCounterSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.CASE_CREATION_STAGE_COUNTER_TABLE, req, p);
  }

  @Get('CaseCreationWarning/Series')
  @SeriesDocs(T.CASE_CREATION_WARNING_TABLE, 'CaseCreationWarning over time: points per bucket, optionally one series per group.')
  caseCreationWarningSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.CASE_CREATION_WARNING_TABLE, req, p);
  }

  @Get('ModelInvokeWarning/Series')
  @SeriesDocs(T.MODEL_INVOKE_WARNING_TABLE, 'ModelInvokeWarning over time: points per bucket, optionally one series per group.')
  modelInvokeWarningSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.MODEL_INVOKE_WARNING_TABLE, req, p);
  }

  @Get('CaptureQueueHealth/Series')
  @SeriesDocs(T.CAPTURE_QUEUE_HEALTH_TABLE, 'CaptureQueueHealth over time: points per bucket, optionally one series per group.')
  captureQueueHealthSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.CAPTURE_QUEUE_HEALTH_TABLE, req, p);
  }

  @Get('RedisConnectionEvent/Series')
  @SeriesDocs(T.REDIS_CONNECTION_EVENT_TABLE, 'RedisConnectionEvent over time: points per bucket, optionally one series per group.')
  redisConnectionEventSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.REDIS_CONNECTION_EVENT_TABLE, req, p);
  }

  @Get('RedisSentinelEvent/Series')
  @SeriesDocs(T.REDIS_SENTINEL_EVENT_TABLE, 'RedisSentinelEvent over time: points per bucket, optionally one series per group.')
  redisSentinelEventSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.REDIS_SENTINEL_EVENT_TABLE, req, p);
  }

  @Get('OpenTelemetryMetric/Series')
  @SeriesDocs(T.OPEN_TELEMETRY_METRIC_TABLE, 'OpenTelemetryMetric over time: points per bucket, optionally one series per group.')
  openTelemetryMetricSeries(@Req() req: Request, @CurrentPrincipal() p: Principal): Promise<SeriesAnswer> {
    return this.reads.series(T.OPEN_TELEMETRY_METRIC_TABLE, req, p);
  }
}
