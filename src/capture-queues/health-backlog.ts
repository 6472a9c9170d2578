import type { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { field, JsonLinesSpool, spoolPath } from '../common/json-lines-spool';
import type { CaptureQueueHealthRepository } from './capture-queue-health.repository';

export interface HealthRow {
  queueId: number;
  queueDepth: number;
  droppedCount: number;
}

/** One minute's CaptureQueueHealth rows, kept until they are written with their own CreatedDate. */
export interface HealthSnapshot {
  createdDate: Date;
  rows: HealthRow[];
  /** Kept by an earlier run of this node (which may have written it before it died). */
  replayed?: boolean;
  /** In the spool on disk. */
  onDisk?: boolean;
}

/** Health snapshots kept through an outage (a week of minutes); beyond, the oldest are given up. */
export const HEALTH_BACKLOG = 10_080;

/**
 * The minutes of CaptureQueueHealth rows not written yet (oldest first), kept in memory and, once an
 * outage holds them back, in a spool on disk too: they outlive a node killed meanwhile. Each minute
 * is written with its own CreatedDate; a minute replayed from an earlier run is written only if that
 * run had not written it already.
 */
export class HealthBacklog {
  private readonly minutes: HealthSnapshot[] = [];
  private readonly spool: JsonLinesSpool<HealthSnapshot>;

  constructor(
    private readonly healthRows: CaptureQueueHealthRepository,
    private readonly instance: string,
    dataDirectory: string,
    private readonly logger: Logger,
  ) {
    this.spool = new JsonLinesSpool(spoolPath(dataDirectory, instance, 'CaptureQueueHealth'), parseHealthSnapshot);
  }

  /** How many minutes wait to be written. */
  get length(): number {
    return this.minutes.length;
  }

  /** Puts the minutes an earlier run of this node kept on disk first; false when there were none. */
  async replay(): Promise<boolean> {
    const minutes = await this.spool.replay('CaptureQueueHealth minutes');
    if (minutes.length === 0) return false;
    this.minutes.unshift(...minutes.map((snapshot) => ({ ...snapshot, replayed: true, onDisk: true })));
    return true;
  }

  close(): Promise<void> {
    return this.spool.close();
  }

  keep(snapshot: HealthSnapshot): void {
    this.minutes.push(snapshot);
    if (this.minutes.length > HEALTH_BACKLOG) {
      const given = this.minutes.shift();
      this.logger.error(`more than ${HEALTH_BACKLOG} minutes of CaptureQueueHealth rows wait for the database: the oldest minute is given up`);
      if (given?.onDisk) void this.spool.rewrite(() => this.minutes.filter((s) => s.onDisk).map(spooledSnapshot));
    }
  }

  /** The minutes not written yet go to disk too (appended, flushed), once each. */
  async spoolUnwritten(): Promise<void> {
    const fresh = this.minutes.filter((s) => !s.onDisk);
    if (fresh.length === 0) return;
    // Counted as on disk from the append on, so a rewrite meanwhile keeps them (JsonLinesSpool.rewrite).
    for (const snapshot of fresh) snapshot.onDisk = true;
    if (!(await this.spool.append(fresh.map(spooledSnapshot)))) for (const snapshot of fresh) snapshot.onDisk = false;
  }

  /** Every kept minute is written: the backlog and the spool are emptied. */
  async written(): Promise<void> {
    const spooled = this.minutes.some((s) => s.onDisk);
    this.minutes.length = 0;
    if (spooled) await this.spool.rewrite(() => []);
  }

  /** Every kept minute of health rows, each with its own CreatedDate; the number of rows. */
  async write(tx: EntityManager): Promise<number> {
    let rows = 0;
    for (const snapshot of this.minutes) {
      if (snapshot.replayed && (await this.healthRows.isWritten(tx, this.instance, snapshot.createdDate))) continue;
      rows += await this.healthRows.insertMany(
        tx,
        {
          queueId: snapshot.rows.map((h) => h.queueId),
          queueDepth: snapshot.rows.map((h) => h.queueDepth),
          droppedCount: snapshot.rows.map((h) => h.droppedCount),
        },
        { createdDate: snapshot.createdDate, instance: this.instance },
      );
    }
    return rows;
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
