import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryRunner } from 'typeorm';
import { Clock } from '../common/clock';
import { boundText } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';
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
 * the previous flush), zeros included, all in one transaction with one multi-row INSERT per table.
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly queues: CaptureQueues,
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
    let runner: QueryRunner | null = null;
    try {
      runner = this.dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      const r = runner;
      const instance = this.settings.instance;
      const insert = async (table: string, columns: string[], types: string[], arrays: unknown[][]) => {
        written[table] = arrays[0]?.length ?? 0;
        if (written[table] === 0) return;
        const n = columns.length;
        await r.query(
          `INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}, "CreatedDate", "Instance")
           SELECT *, $${n + 1}::timestamptz, $${n + 2}::text
             FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`,
          [...arrays, createdDate, instance],
        );
      };

      const mw = drained.modelInvokeWarnings;
      await insert(
        'ModelInvokeWarning',
        ['OccurredDate', 'EntityAnalysisModelGuid', 'EntityAnalysisModelName', 'EntityAnalysisModelInstanceEntryGuid', 'Message', 'ElapsedMicroseconds', 'SinceLastEntryMicroseconds'],
        ['timestamptz', 'uuid', 'text', 'uuid', 'text', 'bigint', 'bigint'],
        [
          mw.map((e) => iso(e.occurredDate)),
          mw.map((e) => e.modelGuid),
          mw.map((e) => boundText(e.modelName, TEXT.name)),
          mw.map((e) => e.entryGuid),
          mw.map((e) => boundText(e.message, TEXT.message)),
          mw.map((e) => micro(e.elapsedMicroseconds)),
          mw.map((e) => micro(e.sinceLastEntryMicroseconds)),
        ],
      );
      const cw = drained.caseCreationWarnings;
      await insert(
        'CaseCreationWarning',
        ['OccurredDate', 'CaseWorkflowGuid', 'CaseWorkflowName', 'CaseKey', 'CaseKeyValue', 'StageId', 'Destination', 'DurationMicroseconds'],
        ['timestamptz', 'uuid', 'text', 'text', 'text', 'smallint', 'text', 'bigint'],
        [
          cw.map((e) => iso(e.occurredDate)),
          cw.map((e) => e.caseWorkflowGuid),
          cw.map((e) => boundText(e.caseWorkflowName, TEXT.name)),
          cw.map((e) => boundText(e.caseKey, TEXT.name)),
          cw.map((e) => boundText(e.caseKeyValue, TEXT.key)),
          cw.map((e) => e.stageId),
          cw.map((e) => boundText(e.destination, TEXT.url)),
          cw.map((e) => micro(e.durationMicroseconds)),
        ],
      );
      const aw = drained.archiverWarnings;
      await insert(
        'ArchiverWarning',
        ['OccurredDate', 'EntityAnalysisModelGuid', 'EntityAnalysisModelName', 'EntityAnalysisModelInstanceEntryGuid', 'StageId', 'DurationMicroseconds'],
        ['timestamptz', 'uuid', 'text', 'uuid', 'smallint', 'bigint'],
        [
          aw.map((e) => iso(e.occurredDate)),
          aw.map((e) => e.modelGuid),
          aw.map((e) => boundText(e.modelName, TEXT.name)),
          aw.map((e) => e.entryGuid),
          aw.map((e) => e.stageId),
          aw.map((e) => micro(e.durationMicroseconds)),
        ],
      );
      for (const [table, events] of [
        ['RedisSentinelEvent', drained.redisSentinelEvents],
        ['RedisConnectionEvent', drained.redisConnectionEvents],
      ] as const) {
        await insert(
          table,
          ['OccurredDate', 'EventName', 'Endpoint', 'Message'],
          ['timestamptz', 'text', 'text', 'text'],
          [
            events.map((e) => iso(e.occurredDate)),
            events.map((e) => boundText(e.eventName, TEXT.name)),
            events.map((e) => boundText(e.endpoint, TEXT.name)),
            events.map((e) => boundText(e.message, TEXT.message)),
          ],
        );
      }
      const series = [...drained.metrics.values()];
      await insert(
        'OpenTelemetryMetric',
        ['Name', 'Tags', 'Count', 'Sum', 'Min', 'Max'],
        ['text', 'jsonb', 'bigint', 'float8', 'float8', 'float8'],
        [
          series.map((s) => s.name),
          series.map((s) => JSON.stringify(s.tags)),
          series.map((s) => s.count),
          series.map((s) => s.sum),
          series.map((s) => s.min),
          series.map((s) => s.max),
        ],
      );
      const ac = [...drained.archiverCounters.values()];
      await insert(
        'ArchiverStagePerformanceCounter',
        ['EntityAnalysisModelGuid', 'StageId', 'TotalMicroseconds', 'MinMicroseconds', 'MaxMicroseconds', 'InvokeCount'],
        ['uuid', 'smallint', 'bigint', 'bigint', 'bigint', 'bigint'],
        [
          ac.map((c) => c.key.modelGuid),
          ac.map((c) => c.key.stageId),
          ac.map((c) => micro(c.totalMicroseconds)),
          ac.map((c) => micro(c.minMicroseconds)),
          ac.map((c) => micro(c.maxMicroseconds)),
          ac.map((c) => c.invokeCount),
        ],
      );
      const cc = [...drained.caseCreationCounters.values()];
      await insert(
        'CaseCreationStagePerformanceCounter',
        ['StageId', 'TotalMicroseconds', 'MinMicroseconds', 'MaxMicroseconds', 'InvokeCount'],
        ['smallint', 'bigint', 'bigint', 'bigint', 'bigint'],
        [
          cc.map((c) => c.key.stageId),
          cc.map((c) => micro(c.totalMicroseconds)),
          cc.map((c) => micro(c.minMicroseconds)),
          cc.map((c) => micro(c.maxMicroseconds)),
          cc.map((c) => c.invokeCount),
        ],
      );
      await insert(
        'CaptureQueueHealth',
        ['QueueId', 'QueueDepth', 'DroppedCount'],
        ['smallint', 'int', 'bigint'],
        [health.map((h) => h.queueId), health.map((h) => h.queueDepth), health.map((h) => h.droppedCount)],
      );
      await runner.commitTransaction();
    } catch (error) {
      if (runner?.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
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
    } finally {
      await runner?.release().catch(() => undefined);
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
