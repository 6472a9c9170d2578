import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { OpenTelemetryMetricRepository } from './open-telemetry-metric.repository';
import { RedisConnectionEventRepository, RedisSentinelEventRepository } from './redis-event.repositories';
import {
  ArchiverStagePerformanceCounterRepository,
  CaseCreationStagePerformanceCounterRepository,
} from './stage-performance-counter.repositories';
import { ArchiverWarningRepository, CaseCreationWarningRepository, ModelInvokeWarningRepository } from './warning.repositories';
import { CaptureQueueId } from './capture-queue-id';
import { CaptureQueues } from './capture-queues.service';

/** The entries of one table drained by a flush, and how to write or put back any of them. */
export interface TablePart {
  table: string;
  /** The queue whose DroppedCount an entry set aside adds to (none for the stage counters). */
  queueId: CaptureQueueId | null;
  entries: unknown[];
  insert(tx: EntityManager, entries: unknown[]): Promise<number>;
  restore(entries: unknown[]): void;
}

function part<E>(
  table: string,
  queueId: CaptureQueueId | null,
  entries: E[],
  insert: (tx: EntityManager, entries: E[]) => Promise<number>,
  restore: (entries: E[]) => void,
): TablePart {
  return { table, queueId, entries, insert, restore } as TablePart;
}

/** ISO text is much cheaper for the driver to serialise than Date objects (20000 per flush). */
const iso = (date: Date) => date.toISOString();

/**
 * How each queue's entries become the columns of its table: drains every queue into one TablePart
 * per table, each able to insert any of its entries or put them back in their queue.
 */
@Injectable()
export class CaptureRows {
  constructor(
    private readonly queues: CaptureQueues,
    private readonly modelInvokeWarningRows: ModelInvokeWarningRepository,
    private readonly caseCreationWarningRows: CaseCreationWarningRepository,
    private readonly archiverWarningRows: ArchiverWarningRepository,
    private readonly redisSentinelEventRows: RedisSentinelEventRepository,
    private readonly redisConnectionEventRows: RedisConnectionEventRepository,
    private readonly metricRows: OpenTelemetryMetricRepository,
    private readonly archiverCounterRows: ArchiverStagePerformanceCounterRepository,
    private readonly caseCreationCounterRows: CaseCreationStagePerformanceCounterRepository,
  ) {}

  /** Takes every queue's entries out, as one part per table (entries are clean: checked when enqueued). */
  drain(stamp: { createdDate: Date; instance: string }): TablePart[] {
    const q = this.queues;
    const series = [...q.metrics.drain()];
    const archiverCounters = [...q.archiverCounters.drain()];
    const caseCreationCounters = [...q.caseCreationCounters.drain()];
    return [
      part(this.modelInvokeWarningRows.tableName, CaptureQueueId.ModelInvokeWarning, q.modelInvokeWarnings.drain(), (tx, mw) =>
        this.modelInvokeWarningRows.insertMany(
          tx,
          {
            occurredDate: mw.map((e) => iso(e.occurredDate)),
            entityAnalysisModelGuid: mw.map((e) => e.modelGuid),
            entityAnalysisModelName: mw.map((e) => e.modelName),
            entityAnalysisModelInstanceEntryGuid: mw.map((e) => e.entryGuid),
            message: mw.map((e) => e.message),
            elapsedMicroseconds: mw.map((e) => e.elapsedMicroseconds),
            sinceLastEntryMicroseconds: mw.map((e) => e.sinceLastEntryMicroseconds),
          },
          stamp,
        ),
        (entries) => q.modelInvokeWarnings.restore(entries),
      ),
      part(this.caseCreationWarningRows.tableName, CaptureQueueId.CaseCreationWarning, q.caseCreationWarnings.drain(), (tx, cw) =>
        this.caseCreationWarningRows.insertMany(
          tx,
          {
            occurredDate: cw.map((e) => iso(e.occurredDate)),
            caseWorkflowGuid: cw.map((e) => e.caseWorkflowGuid),
            caseWorkflowName: cw.map((e) => e.caseWorkflowName),
            caseKey: cw.map((e) => e.caseKey),
            caseKeyValue: cw.map((e) => e.caseKeyValue),
            stageId: cw.map((e) => e.stageId),
            destination: cw.map((e) => e.destination),
            durationMicroseconds: cw.map((e) => e.durationMicroseconds),
          },
          stamp,
        ),
        (entries) => q.caseCreationWarnings.restore(entries),
      ),
      part(this.archiverWarningRows.tableName, CaptureQueueId.ArchiverWarning, q.archiverWarnings.drain(), (tx, aw) =>
        this.archiverWarningRows.insertMany(
          tx,
          {
            occurredDate: aw.map((e) => iso(e.occurredDate)),
            entityAnalysisModelGuid: aw.map((e) => e.modelGuid),
            entityAnalysisModelName: aw.map((e) => e.modelName),
            entityAnalysisModelInstanceEntryGuid: aw.map((e) => e.entryGuid),
            stageId: aw.map((e) => e.stageId),
            durationMicroseconds: aw.map((e) => e.durationMicroseconds),
          },
          stamp,
        ),
        (entries) => q.archiverWarnings.restore(entries),
      ),
      ...([
        [this.redisSentinelEventRows, CaptureQueueId.RedisSentinelEvent, q.redisSentinelEvents],
        [this.redisConnectionEventRows, CaptureQueueId.RedisConnectionEvent, q.redisConnectionEvents],
      ] as const).map(([rows, queueId, queue]) =>
        part(rows.tableName, queueId, queue.drain(), (tx, events) =>
          rows.insertMany(
            tx,
            {
              occurredDate: events.map((e) => iso(e.occurredDate)),
              eventName: events.map((e) => e.eventName),
              endpoint: events.map((e) => e.endpoint),
              message: events.map((e) => e.message),
            },
            stamp,
          ),
          (entries) => queue.restore(entries),
        ),
      ),
      part(this.metricRows.tableName, CaptureQueueId.OpenTelemetryMetric, series, (tx, list) =>
        this.metricRows.insertMany(
          tx,
          {
            name: list.map(([, s]) => s.name),
            tags: list.map(([, s]) => JSON.stringify(s.tags)),
            count: list.map(([, s]) => s.count),
            sum: list.map(([, s]) => s.sum),
            min: list.map(([, s]) => s.min),
            max: list.map(([, s]) => s.max),
          },
          stamp,
        ),
        (entries) => q.metrics.restore(new Map(entries)),
      ),
      part(this.archiverCounterRows.tableName, null, archiverCounters, (tx, list) =>
        this.archiverCounterRows.insertMany(
          tx,
          {
            entityAnalysisModelGuid: list.map(([, c]) => c.key.modelGuid),
            entityAnalysisModelName: list.map(([, c]) => c.key.modelName),
            stageId: list.map(([, c]) => c.key.stageId),
            totalMicroseconds: list.map(([, c]) => Math.round(c.totalMicroseconds)),
            minMicroseconds: list.map(([, c]) => Math.round(c.minMicroseconds)),
            maxMicroseconds: list.map(([, c]) => Math.round(c.maxMicroseconds)),
            invokeCount: list.map(([, c]) => c.invokeCount),
          },
          stamp,
        ),
        (entries) => q.archiverCounters.restore(new Map(entries)),
      ),
      part(this.caseCreationCounterRows.tableName, null, caseCreationCounters, (tx, list) =>
        this.caseCreationCounterRows.insertMany(
          tx,
          {
            stageId: list.map(([, c]) => c.key.stageId),
            totalMicroseconds: list.map(([, c]) => Math.round(c.totalMicroseconds)),
            minMicroseconds: list.map(([, c]) => Math.round(c.minMicroseconds)),
            maxMicroseconds: list.map(([, c]) => Math.round(c.maxMicroseconds)),
            invokeCount: list.map(([, c]) => c.invokeCount),
          },
          stamp,
        ),
        (entries) => q.caseCreationCounters.restore(new Map(entries)),
      ),
    ];
  }
}
