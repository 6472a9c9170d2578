/** What withinDeadline rejects with when the time is up (told apart from the work's own failure). */
export class DeadlineError extends Error {}

/**
 * Waits for `work` at most `ms`: settles as it does, or rejects with `DeadlineError('<what> within <ms> ms')`
 * once the time is up. The work itself goes on (a promise cannot be cancelled); its late result is
 * dropped. The one form of every wait on a dependency that has no deadline of its own.
 */
export async function withinDeadline<T>(work: Promise<T>, ms: number, what = 'no answer'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new DeadlineError(`${what} within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
