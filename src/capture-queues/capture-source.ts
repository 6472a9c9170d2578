import type { EntityManager } from 'typeorm';

/** A queue the flush empties and, when a write fails, refills: what every capture queue offers it. */
export interface Drainable<E> {
  drain(): E[];
  /** Puts drained entries back (up to the queue's capacity; what no longer fits is dropped and counted). */
  restore(entries: E[]): void;
}

/** A queue's depth and pending drop count, as each minute's CaptureQueueHealth row reports them. */
export interface QueueHealth {
  readonly depth: number;
  readonly dropped: number;
  acknowledgeDropped(count: number): void;
}

/** The entries of one table drained by a flush, and how to write or put back any of them. */
export interface TablePart {
  table: string;
  /** The queue whose DroppedCount an entry set aside adds to (none for the stage counters). */
  queueId: number | null;
  entries: unknown[];
  insert(tx: EntityManager, entries: unknown[]): Promise<number>;
  restore(entries: unknown[]): void;
}

/**
 * What the flush writes, as the folder that owns the tables describes it (telemetry/): the flush
 * itself knows no table, so capture-queues/ sits below the tables it writes and never imports them.
 */
export interface CaptureSource {
  /** Takes every queue's entries out, as one part per table. */
  drain(stamp: { createdDate: Date; instance: string }): TablePart[];
  /** Depth and pending drop count of every queue, by QueueId, in QueueId order. */
  health(): { queueId: number; depth: number; dropped: number }[];
  /** The drops a health row reported are now that row's: the queue stops counting them. */
  acknowledgeDropped(queueId: number, count: number): void;
}

/** The injection token of the CaptureSource a CaptureQueuesModule flushes. */
export const CAPTURE_SOURCE = 'CaptureSource';
