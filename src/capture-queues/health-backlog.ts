import type { Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { BacklogFlags, DurableBacklog } from '../common/durable-backlog';
import { field, spoolPath } from '../common/json-lines-spool';
import type { CaptureQueueHealthRepository } from './capture-queue-health.repository';

export interface HealthRow {
  queueId: number;
  queueDepth: number;
  droppedCount: number;
}

/** One minute's CaptureQueueHealth rows, kept until they are written with their own CreatedDate. */
export interface HealthSnapshot extends BacklogFlags {
  createdDate: Date;
  rows: HealthRow[];
}

/** Health snapshots kept through an outage (a week of minutes); beyond, the oldest are given up. */
export const HEALTH_BACKLOG = 10_080;

/**
 * The minutes of CaptureQueueHealth rows not written yet (oldest first), kept in memory and, once an
 * outage holds them back, in a spool on disk too: they outlive a node killed meanwhile. Each minute
 * is written with its own CreatedDate; a minute replayed from an earlier run is written only if that
 * run had not written it already. The bookkeeping is DurableBacklog's (common/durable-backlog.ts).
 */
export class HealthBacklog extends DurableBacklog<HealthSnapshot> {
  constructor(
    private readonly healthRows: CaptureQueueHealthRepository,
    private readonly instance: string,
    dataDirectory: string,
    logger: Logger,
  ) {
    super({
      path: spoolPath(dataDirectory, instance, 'CaptureQueueHealth'),
      what: 'CaptureQueueHealth minutes',
      capacity: HEALTH_BACKLOG,
      // The timeline keeps its most recent minutes.
      whenFull: 'give-up-oldest',
      onGivenUp: () =>
        logger.error(`more than ${HEALTH_BACKLOG} minutes of CaptureQueueHealth rows wait for the database: the oldest minute is given up`),
      // A minute goes to disk once its write has failed (most minutes are written at once).
      spoolWhen: 'when-asked',
      rewriteKeeps: 'rows-on-disk',
      toLine: spooledSnapshot,
      parse: parseHealthSnapshot,
    });
  }

  /** Every kept minute of health rows, each with its own CreatedDate; the number of rows. */
  async write(tx: EntityManager): Promise<number> {
    let rows = 0;
    for (const snapshot of this.oldest()) {
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
