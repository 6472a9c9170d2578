import { Injectable } from '@nestjs/common';
import { ArchiverStage, CaseCreationStage } from './telemetry.types';
import { CaptureQueueId } from './capture-queue-id';
import { BoundedQueue, MetricSeriesQueue, StageCounters } from '../capture-queues/bounded-queue';
import { checkArchiverWarning, checkCaseCreationWarning, checkModelInvokeWarning, checkRedisEvent } from '../capture-queues/capture-entry.checks';

/** Entries per queue (service.md 8). */
export const QUEUE_CAPACITY = 20_000;
/** Distinct series of the OpenTelemetryMetric queue (service.md 8). */
export const METRIC_SERIES_CAPACITY = 10_000;

export interface ArchiverWarningEntry {
  occurredDate: Date;
  modelGuid: string;
  modelName: string | null;
  entryGuid: string | null;
  stageId: ArchiverStage;
  durationMicroseconds: number;
}

export interface CaseCreationWarningEntry {
  occurredDate: Date;
  caseWorkflowGuid: string | null;
  caseWorkflowName: string | null;
  caseKey: string | null;
  caseKeyValue: string | null;
  stageId: CaseCreationStage;
  destination: string | null;
  durationMicroseconds: number;
}

export interface ModelInvokeWarningEntry {
  occurredDate: Date;
  modelGuid: string;
  modelName: string | null;
  entryGuid: string | null;
  message: string | null;
  elapsedMicroseconds: number;
  sinceLastEntryMicroseconds: number;
}

export interface RedisEventEntry {
  occurredDate: Date;
  eventName: string;
  endpoint: string | null;
  message: string | null;
}

/** What a flush reads and acknowledges of every queue, whatever it holds. */
export interface QueueHealth {
  readonly depth: number;
  readonly dropped: number;
  acknowledgeDropped(count: number): void;
}

/**
 * The six bounded capture queues of service.md 6 and the stage counters, held in memory between
 * flushes. Producers (telemetry/) only ever push here; writing is the flusher's job, once a minute.
 * Every entry is checked as it is enqueued (capture-entry.checks.ts, contract 13): its text cleaned and
 * bounded, an entry that could never be written dropped and counted, so a flush never meets one.
 */
@Injectable()
export class CaptureQueues {
  readonly modelInvokeWarnings = new BoundedQueue<ModelInvokeWarningEntry>(QUEUE_CAPACITY, checkModelInvokeWarning);
  readonly caseCreationWarnings = new BoundedQueue<CaseCreationWarningEntry>(QUEUE_CAPACITY, checkCaseCreationWarning);
  readonly archiverWarnings = new BoundedQueue<ArchiverWarningEntry>(QUEUE_CAPACITY, checkArchiverWarning);
  readonly redisSentinelEvents = new BoundedQueue<RedisEventEntry>(QUEUE_CAPACITY, checkRedisEvent);
  readonly redisConnectionEvents = new BoundedQueue<RedisEventEntry>(QUEUE_CAPACITY, checkRedisEvent);
  readonly metrics = new MetricSeriesQueue(METRIC_SERIES_CAPACITY);

  /** Keyed by model and stage; the model's name travels with its key (the first name seen in the minute). */
  readonly archiverCounters = new StageCounters<{ modelGuid: string; modelName: string | null; stageId: ArchiverStage }>();
  readonly caseCreationCounters = new StageCounters<{ stageId: CaseCreationStage }>();

  /** Every queue by its QueueId: the one place a QueueId meets its queue. */
  readonly byId: ReadonlyMap<CaptureQueueId, QueueHealth> = new Map<CaptureQueueId, QueueHealth>([
    [CaptureQueueId.ModelInvokeWarning, this.modelInvokeWarnings],
    [CaptureQueueId.CaseCreationWarning, this.caseCreationWarnings],
    [CaptureQueueId.ArchiverWarning, this.archiverWarnings],
    [CaptureQueueId.RedisSentinelEvent, this.redisSentinelEvents],
    [CaptureQueueId.RedisConnectionEvent, this.redisConnectionEvents],
    [CaptureQueueId.OpenTelemetryMetric, this.metrics],
  ]);

  /** Depth and pending drop count of every queue, by QueueId. */
  health(): { queueId: CaptureQueueId; depth: number; dropped: number }[] {
    return [...this.byId].map(([queueId, queue]) => ({ queueId, depth: queue.depth, dropped: queue.dropped }));
  }
}
