import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { field, JsonLinesSpool, spoolPath } from '../common/json-lines-spool';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isDatabaseUnavailable } from '../database/deadlines';
import { Transactions } from '../database/transactions';
import { OpenTelemetryMetricRepository } from '../telemetry/open-telemetry-metric.repository';
import { RedisConnectionEventRepository, RedisSentinelEventRepository } from '../telemetry/redis-event.repositories';
import {
  ArchiverStagePerformanceCounterRepository,
  CaseCreationStagePerformanceCounterRepository,
} from '../telemetry/stage-performance-counter.repositories';
import { ArchiverWarningRepository, CaseCreationWarningRepository, ModelInvokeWarningRepository } from '../telemetry/warning.repositories';
import { CaptureQueueHealthRepository } from './capture-queue-health.repository';
import { CaptureQueueId } from '../telemetry/telemetry.types';
import { CaptureQueues } from './capture-queues.service';

/** What one flush did. */
export interface FlushReport {
  /** Every entry written or set aside, and the health rows written. */
  ok: boolean;
  createdDate: Date;
  /** Rows written per table by this flush (health rows of earlier, unwritten minutes included). */
  written: Record<string, number>;
  /** Entries set aside per table: the database refused each of them alone (counted as dropped). */
  setAside: Record<string, number>;
  /** This flush's QueueDepth and DroppedCount per QueueId, as written or kept to be written. */
  health: HealthRow[];
}

interface HealthRow {
  queueId: number;
  queueDepth: number;
  droppedCount: number;
}

/** One minute's CaptureQueueHealth rows, kept until they are written with their own CreatedDate. */
interface HealthSnapshot {
  createdDate: Date;
  rows: HealthRow[];
  /** Kept by an earlier run of this node (which may have written it before it died). */
  replayed?: boolean;
  /** In the spool on disk. */
  onDisk?: boolean;
}

/** Health snapshots kept through an outage (a week of minutes); beyond, the oldest are given up. */
export const HEALTH_BACKLOG = 10_080;

/** The entries of one table drained by a flush, and how to write or put back any of them. */
interface TablePart {
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
 * True when the database refused what an entry holds (SQLSTATE class 22 data exception or 23
 * integrity constraint), or the driver could not send it: that entry's fault, not the table's.
 */
function entryAtFault(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^2[23]/.test(code);
    current = (current as { driverError?: unknown; cause?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
  }
  return !isDatabaseUnavailable(error);
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Writes the capture queues to PostgreSQL once a minute: every queue's entries, the stage counters
 * that saw activity, and one CaptureQueueHealth row per queue (QueueDepth before the drain,
 * DroppedCount since the previous flush), zeros included. Flushes never overlap: a call made while
 * one runs waits for it and then flushes again.
 *
 * Normally everything goes in one transaction with one multi-row INSERT per table. When that fails:
 * - the database cannot be reached (an outage): everything drained goes back into its queue (up to
 *   the capacity, the overflow counted as dropped) and this minute's health rows are kept in memory,
 *   to be written with their own CreatedDate by the first flush that reaches the database again, so
 *   the timeline has no hole where the operator most needs it;
 * - the database answered with an error: each table is written on its own, so one table's trouble
 *   holds back no other; a table refused for what its entries hold is retried entry by entry, and an
 *   entry refused alone is set aside, logged at ERROR and counted as dropped in its queue's row of
 *   this minute; a table refused for any other reason keeps its entries for the next flush. The
 *   health rows are written whatever happened to the entries (contract 13).
 */
@Injectable()
export class CaptureFlusher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CaptureFlusher');
  private running: Promise<FlushReport> | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly healthBacklog: HealthSnapshot[] = [];
  /** The minutes of health rows an outage holds back, on disk too: they outlive a node killed meanwhile. */
  private readonly healthSpool: JsonLinesSpool<HealthSnapshot>;

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
  ) {
    this.healthSpool = new JsonLinesSpool(spoolPath(settings.dataDirectory, settings.instance, 'CaptureQueueHealth'), parseHealthSnapshot);
  }

  /**
   * Minutes of health rows an earlier run of this node kept on disk go first in the backlog and are
   * written now (in the flush queue, without a snapshot of their own: the timeline keeps one row per
   * queue per minute); a minute that run had already written is not written again.
   */
  async onApplicationBootstrap(): Promise<void> {
    const minutes = await this.healthSpool.replay('CaptureQueueHealth minutes');
    if (minutes.length === 0) return;
    this.healthBacklog.unshift(...minutes.map((snapshot) => ({ ...snapshot, replayed: true, onDisk: true })));
    const next = this.chain.then(async () => {
      try {
        await this.transactions.run((tx) => this.writeHealth(tx));
        await this.healthWritten();
      } catch (error) {
        this.logger.warn(`the kept CaptureQueueHealth rows could not be written yet, kept for the next flush: ${messageOf(error)}`);
      }
    });
    this.chain = next;
  }

  /** After the stop's own flush (beforeApplicationShutdown), which may still spool its minute. */
  async onApplicationShutdown(): Promise<void> {
    await this.healthSpool.close();
  }

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

  /** This minute's and earlier minutes' health rows not yet written (oldest first). */
  get unwrittenHealth(): number {
    return this.healthBacklog.length;
  }

  private async flushOnce(): Promise<FlushReport> {
    const q = this.queues;
    const createdDate = this.clock.now();
    // The snapshot now owns the drops it reports: they are counted in this minute's row only, whenever
    // that row gets written.
    const health: HealthRow[] = q.health().map((h) => ({ queueId: h.queueId, queueDepth: h.depth, droppedCount: h.dropped }));
    for (const row of health) this.queueOf(row.queueId).acknowledgeDropped(row.droppedCount);
    this.keepHealth({ createdDate, rows: health });
    const parts = this.drain({ createdDate, instance: this.settings.instance });
    const written: Record<string, number> = {};
    const setAside: Record<string, number> = {};

    try {
      await this.transactions.run(async (tx) => {
        for (const p of parts) written[p.table] = await p.insert(tx, p.entries);
        written[this.healthRows.tableName] = await this.writeHealth(tx);
      });
      await this.healthWritten();
      return { ok: true, createdDate, written, setAside, health };
    } catch (error) {
      if (isDatabaseUnavailable(error)) return this.outage(parts, error, createdDate, health);
      this.logger.warn(`capture flush: the database refused the batch, writing table by table: ${messageOf(error)}`);
    }

    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      written[p.table] = 0;
      if (p.entries.length === 0) continue;
      let batchError: unknown;
      try {
        written[p.table] = await this.transactions.run((tx) => p.insert(tx, p.entries));
        continue;
      } catch (error) {
        if (isDatabaseUnavailable(error)) return this.outage(parts.slice(i), error, createdDate, health);
        batchError = error;
      }
      if (!entryAtFault(batchError)) {
        // The table itself (missing, no permission, a lock timeout): its entries wait for the next flush.
        p.restore(p.entries);
        ok = false;
        this.logger.error(`capture flush: ${p.table} could not be written, its entries are kept for the next flush: ${messageOf(batchError)}`);
        continue;
      }
      for (let k = 0; k < p.entries.length; k++) {
        try {
          written[p.table] += await this.transactions.run((tx) => p.insert(tx, [p.entries[k]]));
        } catch (error) {
          if (isDatabaseUnavailable(error)) {
            p.restore(p.entries.slice(k));
            return this.outage(parts.slice(i + 1), error, createdDate, health);
          }
          if (!entryAtFault(error)) {
            p.restore(p.entries.slice(k));
            ok = false;
            this.logger.error(`capture flush: ${p.table} could not be written, its entries are kept for the next flush: ${messageOf(error)}`);
            break;
          }
          setAside[p.table] = (setAside[p.table] ?? 0) + 1;
          if (p.queueId !== null) {
            const row = health.find((h) => h.queueId === p.queueId);
            if (row) row.droppedCount++;
          }
          this.logger.error(`capture flush: a ${p.table} entry was refused by the database and is set aside (counted as dropped): ${messageOf(error)}`);
        }
      }
    }

    try {
      written[this.healthRows.tableName] = await this.transactions.run((tx) => this.writeHealth(tx));
      await this.healthWritten();
    } catch (error) {
      ok = false;
      written[this.healthRows.tableName] = 0;
      this.logger.error(`capture flush: the health rows could not be written, kept for the next flush: ${messageOf(error)}`);
      await this.spoolHealth();
    }
    return { ok, createdDate, written, setAside, health };
  }

  /** The database cannot be reached: the given parts go back to their queues; the health rows wait. */
  private async outage(unwritten: TablePart[], error: unknown, createdDate: Date, health: HealthRow[]): Promise<FlushReport> {
    for (const p of unwritten) p.restore(p.entries);
    await this.spoolHealth();
    // Constant text: a long outage is one line and then one count per logging window, not a line a minute.
    this.logger.error(`capture flush failed, the database cannot be reached: entries kept in their queues, health rows kept with their minute: ${messageOf(error)}`);
    return { ok: false, createdDate, written: {}, setAside: {}, health };
  }

  private keepHealth(snapshot: HealthSnapshot): void {
    this.healthBacklog.push(snapshot);
    if (this.healthBacklog.length > HEALTH_BACKLOG) {
      const given = this.healthBacklog.shift();
      this.logger.error(`more than ${HEALTH_BACKLOG} minutes of CaptureQueueHealth rows wait for the database: the oldest minute is given up`);
      if (given?.onDisk) void this.healthSpool.rewrite(() => this.healthBacklog.filter((s) => s.onDisk).map(spooledSnapshot));
    }
  }

  /** The minutes not written yet go to disk too (appended, flushed), once each. */
  private async spoolHealth(): Promise<void> {
    const fresh = this.healthBacklog.filter((s) => !s.onDisk);
    if (fresh.length === 0) return;
    // Counted as on disk from the append on, so a rewrite meanwhile keeps them (JsonLinesSpool.rewrite).
    for (const snapshot of fresh) snapshot.onDisk = true;
    if (!(await this.healthSpool.append(fresh.map(spooledSnapshot)))) for (const snapshot of fresh) snapshot.onDisk = false;
  }

  /** Every kept minute is written: the backlog and the spool are emptied. */
  private async healthWritten(): Promise<void> {
    const spooled = this.healthBacklog.some((s) => s.onDisk);
    this.healthBacklog.length = 0;
    if (spooled) await this.healthSpool.rewrite(() => []);
  }

  /** Every kept minute of health rows, each with its own CreatedDate; the number of rows. */
  private async writeHealth(tx: EntityManager): Promise<number> {
    let rows = 0;
    for (const snapshot of this.healthBacklog) {
      if (snapshot.replayed && (await this.healthRows.isWritten(tx, this.settings.instance, snapshot.createdDate))) continue;
      rows += await this.healthRows.insertMany(
        tx,
        {
          queueId: snapshot.rows.map((h) => h.queueId),
          queueDepth: snapshot.rows.map((h) => h.queueDepth),
          droppedCount: snapshot.rows.map((h) => h.droppedCount),
        },
        { createdDate: snapshot.createdDate, instance: this.settings.instance },
      );
    }
    return rows;
  }

  private queueOf(queueId: number): { acknowledgeDropped(count: number): void } {
    const q = this.queues;
    switch (queueId) {
      case CaptureQueueId.ModelInvokeWarning:
        return q.modelInvokeWarnings;
      case CaptureQueueId.CaseCreationWarning:
        return q.caseCreationWarnings;
      case CaptureQueueId.ArchiverWarning:
        return q.archiverWarnings;
      case CaptureQueueId.RedisSentinelEvent:
        return q.redisSentinelEvents;
      case CaptureQueueId.RedisConnectionEvent:
        return q.redisConnectionEvents;
      default:
        return q.metrics;
    }
  }

  /** Takes every queue's entries out, as one part per table (entries are clean: checked when enqueued). */
  private drain(stamp: { createdDate: Date; instance: string }): TablePart[] {
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

/** What the spool keeps of a minute: its instant and rows, nothing about its place in the backlog. */
function spooledSnapshot({ createdDate, rows }: HealthSnapshot): HealthSnapshot {
  return { createdDate, rows };
}

/** One spooled line back into a minute of health rows, or null when it is not one. */
function parseHealthSnapshot(raw: Record<string, unknown>): HealthSnapshot | null {
  const createdDate = field.date(raw.createdDate);
  if (!createdDate || !Array.isArray(raw.rows)) return null;
  const rows: HealthRow[] = [];
  for (const row of raw.rows as unknown[]) {
    const r = (typeof row === 'object' && row !== null ? row : {}) as Record<string, unknown>;
    const queueId = field.id(r.queueId);
    const queueDepth = field.id(r.queueDepth);
    const droppedCount = field.id(r.droppedCount);
    if (queueId === null || queueDepth === null || droppedCount === null) return null;
    rows.push({ queueId, queueDepth, droppedCount });
  }
  return { createdDate, rows };
}
