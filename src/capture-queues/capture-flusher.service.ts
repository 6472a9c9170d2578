import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { messageOf } from '../common/errors';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isDatabaseUnavailable } from '../database/deadlines';
import { Transactions } from '../database/transactions';
import { CaptureQueueHealthRepository } from './capture-queue-health.repository';
import { CAPTURE_SOURCE, CaptureSource, TablePart } from './capture-source';
import { HealthBacklog, HealthRow } from './health-backlog';
import { WriteLadder } from './write-ladder';

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
 *
 * Which tables there are and which columns each gets is the CaptureSource (telemetry/capture-rows.ts);
 * the table-by-table fallback is WriteLadder; the minutes of health rows an outage holds back are
 * HealthBacklog.
 */
@Injectable()
export class CaptureFlusher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('CaptureFlusher');
  private running: Promise<FlushReport> | null = null;
  private chain: Promise<unknown> = Promise.resolve();
  private readonly healthBacklog: HealthBacklog;
  private readonly ladder: WriteLadder;

  constructor(
    private readonly transactions: Transactions,
    @Inject(CAPTURE_SOURCE) private readonly source: CaptureSource,
    private readonly healthRows: CaptureQueueHealthRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    this.healthBacklog = new HealthBacklog(healthRows, settings.instance, settings.dataDirectory, this.logger);
    this.ladder = new WriteLadder(transactions, this.logger);
  }

  /**
   * Minutes of health rows an earlier run of this node kept on disk go first in the backlog and are
   * written now (in the flush queue, without a snapshot of their own: the timeline keeps one row per
   * queue per minute); a minute that run had already written is not written again.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!(await this.healthBacklog.replay())) return;
    const next = this.chain.then(async () => {
      try {
        await this.transactions.run((tx) => this.healthBacklog.write(tx));
        await this.healthBacklog.written();
      } catch (error) {
        this.logger.warn(`the kept CaptureQueueHealth rows could not be written yet, kept for the next flush: ${messageOf(error)}`);
      }
    });
    this.chain = next;
  }

  /** After the stop's own flush (beforeApplicationShutdown), which may still spool its minute. */
  async onApplicationShutdown(): Promise<void> {
    await this.healthBacklog.close();
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

  private async flushOnce(): Promise<FlushReport> {
    const createdDate = this.clock.now();
    // The snapshot now owns the drops it reports: they are counted in this minute's row only, whenever
    // that row gets written.
    const health: HealthRow[] = this.source.health().map((h) => ({ queueId: h.queueId, queueDepth: h.depth, droppedCount: h.dropped }));
    for (const row of health) this.source.acknowledgeDropped(row.queueId, row.droppedCount);
    this.healthBacklog.keep({ createdDate, rows: health });
    const parts = this.source.drain({ createdDate, instance: this.settings.instance });
    const written: Record<string, number> = {};
    const setAside: Record<string, number> = {};

    try {
      await this.transactions.run(async (tx) => {
        for (const p of parts) written[p.table] = await p.insert(tx, p.entries);
        written[this.healthRows.tableName] = await this.healthBacklog.write(tx);
      });
      await this.healthBacklog.written();
      return { ok: true, createdDate, written, setAside, health };
    } catch (error) {
      if (isDatabaseUnavailable(error)) return this.outage(parts, error, createdDate, health);
      this.logger.warn(`capture flush: the database refused the batch, writing table by table: ${messageOf(error)}`);
    }

    const { ok: laddered, outage } = await this.ladder.write(parts, health, written, setAside);
    if (outage) return this.outage(outage.unwritten, outage.error, createdDate, health);
    let ok = laddered;

    try {
      written[this.healthRows.tableName] = await this.transactions.run((tx) => this.healthBacklog.write(tx));
      await this.healthBacklog.written();
    } catch (error) {
      ok = false;
      written[this.healthRows.tableName] = 0;
      this.logger.error(`capture flush: the health rows could not be written, kept for the next flush: ${messageOf(error)}`);
      await this.healthBacklog.spoolUnwritten();
    }
    return { ok, createdDate, written, setAside, health };
  }

  /** The database cannot be reached: the given parts go back to their queues; the health rows wait. */
  private async outage(unwritten: TablePart[], error: unknown, createdDate: Date, health: HealthRow[]): Promise<FlushReport> {
    for (const p of unwritten) p.restore(p.entries);
    await this.healthBacklog.spoolUnwritten();
    // Constant text: a long outage is one line and then one count per logging window, not a line a minute.
    this.logger.error(`capture flush failed, the database cannot be reached: entries kept in their queues, health rows kept with their minute: ${messageOf(error)}`);
    return { ok: false, createdDate, written: {}, setAside: {}, health };
  }
}
