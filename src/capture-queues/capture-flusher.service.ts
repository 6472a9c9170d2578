import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { boundText } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { OpenTelemetryMetricRepository } from '../telemetry/open-telemetry-metric.repository';
import { RedisConnectionEventRepository, RedisSentinelEventRepository } from '../telemetry/redis-event.repositories';
import {
  ArchiverStagePerformanceCounterRepository,
  CaseCreationStagePerformanceCounterRepository,
} from '../telemetry/stage-performance-counter.repositories';
import { ArchiverWarningRepository, CaseCreationWarningRepository, ModelInvokeWarningRepository } from '../telemetry/warning.repositories';
import { CaptureQueueHealthRepository } from './capture-queue-health.repository';
import { CaptureQueues } from './capture-queues.service';

/** Bounds of telemetry text written from pipeline data (names, keys, messages, URLs). */
const TEXT = { name: 256, key: 1024, message: 2048, url: 2048 } as const;

/** What one flush did. */
export interface FlushReport {
  ok: boolean;
  createdDate: Date;
  /** Rows written per table (all zero when the flush failed). */
  written: Record<string, number>;
  /** QueueDepth and DroppedCount per QueueId, as written (or as they would have been). */
  health: { queueId: number; queueDepth: number; droppedCount: number }[];
}

const micro = (value: number) => Math.max(0, Math.round(value));
/** ISO text is much cheaper for the driver to serialise than Date objects (20000 per flush). */
const iso = (date: Date) => date.toISOString();

/**
 * Writes the capture queues to PostgreSQL: every queue's entries, the stage counters that saw
 * activity, and one CaptureQueueHealth row per queue (QueueDepth before the drain, DroppedCount since
 * the previous flush), zeros included, all in one transaction with one multi-row INSERT per table
 * (each table's repository; see BulkInsert for why that insert is SQL).
 * If the transaction fails, everything drained goes back into the queues (up to their capacity) and
 * the drop counts are kept, so the next flush writes it. Flushes never overlap: a call made while one
 * runs waits for it and then flushes again.
 */
@Injectable()
export class CaptureFlusher {
  private readonly logger = new Logger('CaptureFlusher');
  private running: Promise<FlushReport> | null = null;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly transactions: Transactions,
    private readonly queues: CaptureQueues,
    private readonly modelInvokeWarningRows: ModelInvokeWarningRepository,
    private readonly caseCreationWarningRows: CaseCreationWarningRepository,
    private readonly archiverWarningRows: ArchiverWarningRepository,
    private readonly redisSentinelEventRows: RedisSentinelEventRepository,
    private readonly redisConnectionEventRows: RedisConnectionEventRepository,
    private readonly metricRows: OpenTelemetryMetricRepository,
    private readonly archiverCounterRows: ArchiverStagePerformanceCounterRepository,
    private readonly caseCreationCounterRows: CaseCreationStagePerformanceCounterRepository,
    private readonly healthRows: CaptureQueueHealthRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /** True while a flush is in progress (the scheduler skips its tick then). */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Flushes now, after any flush already in progress. */
  flush(): Promise<FlushReport> {
    const next = this.chain.then(() => {
      this.running = this.flushOnce();
      return this.running;
    });
    this.chain = next.catch(() => undefined).finally(() => (this.running = null));
    return next;
  }

  private async flushOnce(): Promise<FlushReport> {
    const q = this.queues;
    const createdDate = this.clock.now();
    const health = q.health().map((h) => ({ queueId: h.queueId, queueDepth: h.depth, droppedCount: h.dropped }));
    const drained = {
      modelInvokeWarnings: q.modelInvokeWarnings.drain(),
      caseCreationWarnings: q.caseCreationWarnings.drain(),
      archiverWarnings: q.archiverWarnings.drain(),
      redisSentinelEvents: q.redisSentinelEvents.drain(),
      redisConnectionEvents: q.redisConnectionEvents.drain(),
      metrics: q.metrics.drain(),
      archiverCounters: q.archiverCounters.drain(),
      caseCreationCounters: q.caseCreationCounters.drain(),
    };
    const written: Record<string, number> = {};
    try {
      await this.transactions.run(async (tx) => {
        const stamp = { createdDate, instance: this.settings.instance };
        const mw = drained.modelInvokeWarnings;
        written[this.modelInvokeWarningRows.tableName] = await this.modelInvokeWarningRows.insertMany(
          tx,
          {
            occurredDate: mw.map((e) => iso(e.occurredDate)),
            entityAnalysisModelGuid: mw.map((e) => e.modelGuid),
            entityAnalysisModelName: mw.map((e) => boundText(e.modelName, TEXT.name)),
            entityAnalysisModelInstanceEntryGuid: mw.map((e) => e.entryGuid),
            message: mw.map((e) => boundText(e.message, TEXT.message)),
            elapsedMicroseconds: mw.map((e) => micro(e.elapsedMicroseconds)),
            sinceLastEntryMicroseconds: mw.map((e) => micro(e.sinceLastEntryMicroseconds)),
          },
          stamp,
        );
        const cw = drained.caseCreationWarnings;
        written[this.caseCreationWarningRows.tableName] = await this.caseCreationWarningRows.insertMany(
          tx,
          {
            occurredDate: cw.map((e) => iso(e.occurredDate)),
            caseWorkflowGuid: cw.map((e) => e.caseWorkflowGuid),
            caseWorkflowName: cw.map((e) => boundText(e.caseWorkflowName, TEXT.name)),
            caseKey: cw.map((e) => boundText(e.caseKey, TEXT.name)),
            caseKeyValue: cw.map((e) => boundText(e.caseKeyValue, TEXT.key)),
            stageId: cw.map((e) => e.stageId),
            destination: cw.map((e) => boundText(e.destination, TEXT.url)),
            durationMicroseconds: cw.map((e) => micro(e.durationMicroseconds)),
          },
          stamp,
        );
        const aw = drained.archiverWarnings;
        written[this.archiverWarningRows.tableName] = await this.archiverWarningRows.insertMany(
          tx,
          {
            occurredDate: aw.map((e) => iso(e.occurredDate)),
            entityAnalysisModelGuid: aw.map((e) => e.modelGuid),
            entityAnalysisModelName: aw.map((e) => boundText(e.modelName, TEXT.name)),
            entityAnalysisModelInstanceEntryGuid: aw.map((e) => e.entryGuid),
            stageId: aw.map((e) => e.stageId),
            durationMicroseconds: aw.map((e) => micro(e.durationMicroseconds)),
          },
          stamp,
        );
        for (const [rows, events] of [
          [this.redisSentinelEventRows, drained.redisSentinelEvents],
          [this.redisConnectionEventRows, drained.redisConnectionEvents],
        ] as const) {
          written[rows.tableName] = await rows.insertMany(
            tx,
            {
              occurredDate: events.map((e) => iso(e.occurredDate)),
              eventName: events.map((e) => boundText(e.eventName, TEXT.name)),
              endpoint: events.map((e) => boundText(e.endpoint, TEXT.name)),
              message: events.map((e) => boundText(e.message, TEXT.message)),
            },
            stamp,
          );
        }
        const series = [...drained.metrics.values()];
        written[this.metricRows.tableName] = await this.metricRows.insertMany(
          tx,
          {
            name: series.map((s) => s.name),
            tags: series.map((s) => JSON.stringify(s.tags)),
            count: series.map((s) => s.count),
            sum: series.map((s) => s.sum),
            min: series.map((s) => s.min),
            max: series.map((s) => s.max),
          },
          stamp,
        );
        const ac = [...drained.archiverCounters.values()];
        written[this.archiverCounterRows.tableName] = await this.archiverCounterRows.insertMany(
          tx,
          {
            entityAnalysisModelGuid: ac.map((c) => c.key.modelGuid),
            stageId: ac.map((c) => c.key.stageId),
            totalMicroseconds: ac.map((c) => micro(c.totalMicroseconds)),
            minMicroseconds: ac.map((c) => micro(c.minMicroseconds)),
            maxMicroseconds: ac.map((c) => micro(c.maxMicroseconds)),
            invokeCount: ac.map((c) => c.invokeCount),
          },
          stamp,
        );
        const cc = [...drained.caseCreationCounters.values()];
        written[this.caseCreationCounterRows.tableName] = await this.caseCreationCounterRows.insertMany(
          tx,
          {
            stageId: cc.map((c) => c.key.stageId),
            totalMicroseconds: cc.map((c) => micro(c.totalMicroseconds)),
            minMicroseconds: cc.map((c) => micro(c.minMicroseconds)),
            maxMicroseconds: cc.map((c) => micro(c.maxMicroseconds)),
            invokeCount: cc.map((c) => c.invokeCount),
          },
          stamp,
        );
        written[this.healthRows.tableName] = await this.healthRows.insertMany(
          tx,
          {
            queueId: health.map((h) => h.queueId),
            queueDepth: health.map((h) => h.queueDepth),
            droppedCount: health.map((h) => h.droppedCount),
          },
          stamp,
        );
      });
    } catch (error) {
      q.modelInvokeWarnings.restore(drained.modelInvokeWarnings);
      q.caseCreationWarnings.restore(drained.caseCreationWarnings);
      q.archiverWarnings.restore(drained.archiverWarnings);
      q.redisSentinelEvents.restore(drained.redisSentinelEvents);
      q.redisConnectionEvents.restore(drained.redisConnectionEvents);
      q.metrics.restore(drained.metrics);
      q.archiverCounters.restore(drained.archiverCounters);
      q.caseCreationCounters.restore(drained.caseCreationCounters);
      this.logger.error(`capture flush failed, entries kept for the next flush: ${error instanceof Error ? error.message : String(error)}`);
      return { ok: false, createdDate, written: {}, health };
    }
    // The health rows are written: the drops they reported are no longer pending.
    const [mw, cw, aw, rs, rc, m] = health.map((h) => h.droppedCount);
    q.modelInvokeWarnings.acknowledgeDropped(mw);
    q.caseCreationWarnings.acknowledgeDropped(cw);
    q.archiverWarnings.acknowledgeDropped(aw);
    q.redisSentinelEvents.acknowledgeDropped(rs);
    q.redisConnectionEvents.acknowledgeDropped(rc);
    q.metrics.acknowledgeDropped(m);
    return { ok: true, createdDate, written, health };
  }
}
