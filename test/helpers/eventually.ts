/**
 * Polls `check` every `everyMs` until it holds (a recovering service, a row written off the request
 * path), failing after `ms`, a deadline generous for a busy machine: the tests assert what happens,
 * never how fast (speed is measured in bench/).
 */
export async function eventually(check: () => Promise<boolean> | boolean, ms = 30_000, everyMs = 100): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
