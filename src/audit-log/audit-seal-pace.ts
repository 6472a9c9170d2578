/**
 * How long the sealer yields between two batches while sign-in work waits (issue 29; the same signal
 * as the security sinks', docs/decisions/0029, 0035 and 0039). A batch is one thread's work at a time:
 * the sealing statement in one PostgreSQL backend, then the tree in the service's event loop, never
 * both at once. Holding that one thread 1 / (1 + SEAL_YIELD_FACTOR) of the time is at most a
 * fourteenth of the two cores sign-in saturates, counted in wall time, under the tenth the issue
 * allows. The factor was 3 while a batch cost ~2.5 times what it does since the enqueue trigger hashes
 * the rows (decision 0039); with the cheaper batch, 6 leaves sign-ins more of the cores (0.92 of idle
 * against 0.85 at 3, same machine and day, bench/RESULTS.md) and a 100,000-row backlog (five batches
 * of 20,000, ~0.3 s each under sign-in load) still reaches its checkpoint in ~11 s, within 5 × 7 × a
 * batch's time: 20 s while a batch takes under half a second. With nothing waiting the sealer goes at
 * once. Not a backoff: nothing failed, the pause never grows from batch to batch, and it ends as soon
 * as sign-in work stops waiting.
 */

/** Pause = this × the last batch's elapsed time: the sealer holds 1 / (1 + factor) of the time. */
export const SEAL_YIELD_FACTOR = 6;
/** No single pause is longer than this, however long a batch took on a loaded machine. */
export const SEAL_YIELD_MAX_MS = 4_000;
/** A pause is slept in slices this long, each after asking again whether sign-in work still waits. */
export const SEAL_YIELD_SLICE_MS = 50;

/**
 * Milliseconds to yield after a batch that took `batchMs` (from its transaction's start to its
 * commit), given whether foreground work (sign-ins hashing or queued) waits now. 0 when nothing
 * waits, or when the batch took no measurable time (a clock that stands still in tests).
 */
export function sealYieldMs(batchMs: number, foregroundWaiting: boolean): number {
  if (!foregroundWaiting || !Number.isFinite(batchMs) || batchMs <= 0) return 0;
  return Math.min(Math.ceil(batchMs * SEAL_YIELD_FACTOR), SEAL_YIELD_MAX_MS);
}
