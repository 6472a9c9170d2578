/**
 * How long a sink's deliverer yields after a batch (issue 30, contract 19 "Speed"). Delivery costs
 * CPU in the service and in PostgreSQL (~22 + ~20 µs per event); sign-in hashes with Argon2 on the
 * same cores. While sign-in work waits, delivery pauses SINK_YIELD_FACTOR times as long as its last
 * batch took, so it holds about a tenth of the time (1 / (1 + 9)) and sign-in keeps ≥ 0.9 of its
 * throughput; with nothing waiting it goes at once, so a backlog on an otherwise idle service flows
 * at full speed. This is not a backoff: nothing failed, the pause never grows from batch to batch,
 * and it ends as soon as sign-in work stops waiting (docs/decisions/0029).
 */

/** Pause = this × the last batch's elapsed time: delivery holds 1 / (1 + factor) of the time. */
export const SINK_YIELD_FACTOR = 9;
/** No single pause is longer than this, however long a batch took on a loaded machine. */
export const SINK_YIELD_MAX_MS = 2_000;
/** A pause is slept in slices this long, each after asking again whether sign-in work still waits. */
export const SINK_YIELD_SLICE_MS = 50;

/**
 * Milliseconds to yield after a batch that took `batchMs` (from reading it to its acknowledgement),
 * given whether foreground work (sign-ins hashing or queued) waits now. 0 when nothing waits, or
 * when the batch took no measurable time (a clock that stands still in tests).
 */
export function sinkYieldMs(batchMs: number, foregroundWaiting: boolean): number {
  if (!foregroundWaiting || !Number.isFinite(batchMs) || batchMs <= 0) return 0;
  return Math.min(Math.ceil(batchMs * SINK_YIELD_FACTOR), SINK_YIELD_MAX_MS);
}
