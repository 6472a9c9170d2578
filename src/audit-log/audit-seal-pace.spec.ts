import { SEAL_YIELD_FACTOR, SEAL_YIELD_MAX_MS, sealYieldMs } from './audit-seal-pace';

describe('sealYieldMs: the sealer yields to sign-ins waiting, and only then', () => {
  it('goes at once when nothing waits, however long the batch took', () => {
    expect(sealYieldMs(40, false)).toBe(0);
    expect(sealYieldMs(5_000, false)).toBe(0);
  });

  it('pauses six times the last batch while sign-in work waits: one thread a seventh of the time, a fourteenth of two cores in wall time', () => {
    expect(SEAL_YIELD_FACTOR).toBe(6);
    expect(sealYieldMs(400, true)).toBe(2_400);
    expect(sealYieldMs(1, true)).toBe(6);
    expect(sealYieldMs(0.1, true)).toBe(1);
    const batch = 300;
    const pause = sealYieldMs(batch, true);
    expect(batch / (batch + pause) / 2).toBeCloseTo(1 / 14, 5);
  });

  it('a 100,000-row backlog in five batches of half a second each (a batch under sign-in load takes ~0.3 s) still reaches its checkpoint within 20 s', () => {
    const batches = 100_000 / 20_000;
    expect(batches * (500 + sealYieldMs(500, true))).toBeLessThanOrEqual(20_000);
  });

  it('caps a single pause, so a batch slowed by a loaded machine does not stop sealing for long', () => {
    expect(sealYieldMs(10_000, true)).toBe(SEAL_YIELD_MAX_MS);
    expect(sealYieldMs(SEAL_YIELD_MAX_MS / SEAL_YIELD_FACTOR + 1, true)).toBe(SEAL_YIELD_MAX_MS);
  });

  it('does not grow from batch to batch: the same batch time gives the same pause (no backoff)', () => {
    expect(new Set([1, 2, 3, 4].map(() => sealYieldMs(30, true)))).toEqual(new Set([180]));
  });

  it('never pauses for a batch that took no measurable time (a clock standing still) or a nonsense time', () => {
    expect(sealYieldMs(0, true)).toBe(0);
    expect(sealYieldMs(-5, true)).toBe(0);
    expect(sealYieldMs(Number.NaN, true)).toBe(0);
    expect(sealYieldMs(Number.POSITIVE_INFINITY, true)).toBe(0);
  });
});
