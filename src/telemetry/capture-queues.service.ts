import { Injectable } from '@nestjs/common';
import type { Drainable, QueueHealth } from '../capture-queues/capture-source';
import { ARCHIVER_STAGE_COUNTER, ARCHIVER_WARNING, CAPTURED_TABLES, CASE_CREATION_STAGE_COUNTER, CASE_CREATION_WARNING } from './telemetry.tables';
import { MODEL_INVOKE_WARNING, OPEN_TELEMETRY_METRIC, REDIS_CONNECTION_EVENT, REDIS_SENTINEL_EVENT } from './telemetry.tables';
import type { TelemetryTable } from './telemetry-table';

export { METRIC_SERIES_CAPACITY, QUEUE_CAPACITY } from '../capture-queues/bounded-queue';

/**
 * The capture queues of service.md 6 and the stage counters, held in memory between flushes: one per
 * captured table, made from its description (telemetry.tables.ts). Producers (PipelineTelemetry,
 * BusEventCapture, TelemetryMetrics) only ever push here; writing is the flush's job, once a minute.
 * Every entry is checked as it is enqueued (the description's check, contract 13): its text cleaned
 * and bounded, an entry that could never be written dropped and counted, so a flush never meets one.
 */
@Injectable()
export class CaptureQueues {
  private readonly queues = new Map<TelemetryTable, Drainable<unknown>>(CAPTURED_TABLES.map((table) => [table, table.capture!.queue()]));

  /** The queue of a captured table. */
  of<Q extends Drainable<unknown>>(table: { capture?: { queue(): Q } }): Q {
    const queue = this.queues.get(table as TelemetryTable);
    if (!queue) throw new Error('not a captured telemetry table');
    return queue as Q;
  }

  // The producers' names for the queues (a new table's producer may equally say of(ITS_TABLE)).
  readonly modelInvokeWarnings = this.of(MODEL_INVOKE_WARNING);
  readonly caseCreationWarnings = this.of(CASE_CREATION_WARNING);
  readonly archiverWarnings = this.of(ARCHIVER_WARNING);
  readonly redisSentinelEvents = this.of(REDIS_SENTINEL_EVENT);
  readonly redisConnectionEvents = this.of(REDIS_CONNECTION_EVENT);
  readonly metrics = this.of(OPEN_TELEMETRY_METRIC);
  readonly archiverCounters = this.of(ARCHIVER_STAGE_COUNTER);
  readonly caseCreationCounters = this.of(CASE_CREATION_STAGE_COUNTER);

  /** Every capture queue by its QueueId, in QueueId order: the one place a QueueId meets its queue. */
  readonly byId: ReadonlyMap<number, QueueHealth> = new Map(
    CAPTURED_TABLES.filter((table) => table.capture!.queueId !== null)
      .map((table) => [table.capture!.queueId!, this.of(table) as unknown as QueueHealth] as const)
      .sort(([a], [b]) => a - b),
  );

  /** Depth and pending drop count of every queue, by QueueId. */
  health(): { queueId: number; depth: number; dropped: number }[] {
    return [...this.byId].map(([queueId, queue]) => ({ queueId, depth: queue.depth, dropped: queue.dropped }));
  }
}
