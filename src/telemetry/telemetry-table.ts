import type { Drainable } from '../capture-queues/capture-source';
import type { FlushedRow } from '../database/bulk-insert';
import type { ChartMeasure, GridPage } from '../reads/grid-page';
import type { ReadTable } from '../reads/read-table';

/** The entry type a queue holds. */
export type EntryOf<Q> = Q extends Drainable<infer E> ? E : never;

/**
 * How a table is filled by the once-a-minute flush (service.md 6, contract 13): the queue its
 * producers push to, checked entry by entry as it is enqueued, and how an entry becomes the columns
 * of a row (every row also carries the flush's CreatedDate and the node's Instance).
 */
export interface CaptureDescription<T, Q extends Drainable<unknown>> {
  /** The QueueId of its CaptureQueueHealth rows (service.md 4.3); null: not a capture queue (the stage counters). */
  queueId: number | null;
  /** Makes the queue (one per running service). */
  queue(): Q;
  /** Entity property → its value for one entry, in the order the INSERT lists the columns. */
  columns: { [P in keyof T]?: (entry: EntryOf<Q>) => unknown };
}

/**
 * One telemetry table (contract 10), described once: its entity, its read (columns, filters,
 * statistics and series), the summary of its route, how long its rows are kept, its page and place
 * in the menu, and how the capture flush fills it. Routes (telemetry-reads.controller.ts), capture
 * (capture-rows.ts, capture-queues.service.ts), retention (retention/partitioned-tables.ts) and the
 * pages (web/pages.ts, web/page-tables.ts) loop over TELEMETRY_TABLES (decision 0028).
 */
export interface TelemetryTable<T extends FlushedRow = FlushedRow, Q extends Drainable<unknown> = Drainable<unknown>> {
  entity: new () => T;
  read: ReadTable;
  /** The OpenAPI summary of GET /api/<table>. */
  summary: string;
  /** Partitions by UTC day of CreatedDate, dropped past TelemetryRetentionDays (contract 16). */
  retention: 'day';
  page: {
    section: 'Performance' | 'Logs';
    /** Place in its menu section, from 1. */
    place: number;
    title: string;
    /** The grid page; its route, statistics and the chart's groups are the read's. */
    grid: Omit<GridPage, 'api' | 'statistics' | 'chart'> & { chart?: { measures: ChartMeasure[] } };
  };
  /** Absent for CaptureQueueHealth, which the flush writes itself from the queues' health. */
  capture?: CaptureDescription<T, Q>;
}

/** A description, typed from its entity and queue (so each column's value is read from the right entry type). */
export function telemetryTable<T extends FlushedRow, Q extends Drainable<unknown>>(table: TelemetryTable<T, Q>): TelemetryTable<T, Q> {
  return table;
}
