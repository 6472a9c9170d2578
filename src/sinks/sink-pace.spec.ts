import { ManualClock } from '../common/clock';
import { FOREGROUND_HOLD_MS, ForegroundWork } from '../common/foreground-work';
import { SINK_YIELD_FACTOR, SINK_YIELD_MAX_MS, sinkYieldMs } from './sink-pace';

describe('sinkYieldMs: delivery yields to sign-ins waiting, and only then', () => {
  it('goes at once when nothing waits, however long the batch took', () => {
    expect(sinkYieldMs(40, false)).toBe(0);
    expect(sinkYieldMs(5_000, false)).toBe(0);
  });

  it('pauses nine times the last batch while sign-in work waits: delivery holds a tenth of the time', () => {
    expect(SINK_YIELD_FACTOR).toBe(9);
    expect(sinkYieldMs(40, true)).toBe(360);
    expect(sinkYieldMs(1, true)).toBe(9);
    expect(sinkYieldMs(0.3, true)).toBe(3);
    const batch = 25;
    const pause = sinkYieldMs(batch, true);
    expect(batch / (batch + pause)).toBeCloseTo(0.1, 5);
  });

  it('caps a single pause, so a batch slowed by a loaded machine does not stop delivery for long', () => {
    expect(sinkYieldMs(10_000, true)).toBe(SINK_YIELD_MAX_MS);
    expect(sinkYieldMs(SINK_YIELD_MAX_MS / SINK_YIELD_FACTOR + 1, true)).toBe(SINK_YIELD_MAX_MS);
  });

  it('does not grow from batch to batch: the same batch time gives the same pause (no backoff)', () => {
    const pauses = [1, 2, 3, 4].map(() => sinkYieldMs(30, true));
    expect(new Set(pauses)).toEqual(new Set([270]));
  });

  it('never pauses for a batch that took no measurable time (a clock standing still) or a nonsense time', () => {
    expect(sinkYieldMs(0, true)).toBe(0);
    expect(sinkYieldMs(-5, true)).toBe(0);
    expect(sinkYieldMs(Number.NaN, true)).toBe(0);
  });
});

describe('ForegroundWork: the signal that sign-in work is pending', () => {
  it('waits while a task runs or is queued, and for the hold after the last one ended, on the injected clock', () => {
    const clock = new ManualClock(1_000_000);
    const work = new ForegroundWork(clock);
    expect(work.waiting()).toBe(false);
    work.begin();
    work.begin();
    expect(work.inProgress()).toBe(2);
    clock.advance(10 * FOREGROUND_HOLD_MS);
    expect(work.waiting()).toBe(true);
    work.end();
    clock.advance(10 * FOREGROUND_HOLD_MS);
    expect(work.waiting()).toBe(true);
    work.end();
    expect(work.inProgress()).toBe(0);
    expect(work.waiting()).toBe(true);
    clock.advance(FOREGROUND_HOLD_MS - 1);
    expect(work.waiting()).toBe(true);
    clock.advance(1);
    expect(work.waiting()).toBe(false);
    expect(sinkYieldMs(40, work.waiting())).toBe(0);
  });

  it('an unmatched end does not make the count negative (and so hide the next task)', () => {
    const clock = new ManualClock(0);
    const work = new ForegroundWork(clock);
    work.end();
    work.begin();
    expect(work.inProgress()).toBe(1);
  });
});
