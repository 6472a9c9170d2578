import { formatBucket, niceStep } from './chart.js';

describe('chart helpers', () => {
  it('niceStep: the smallest 1, 2 or 5 × 10ⁿ that splits the span into at most that many parts', () => {
    expect(niceStep(10, 4)).toBe(5);
    expect(niceStep(9, 3)).toBe(5);
    expect(niceStep(100, 4)).toBe(50);
    expect(niceStep(8_912_345, 3)).toBe(5_000_000);
    expect(niceStep(1, 3)).toBe(0.5);
    expect(niceStep(0.03, 3)).toBe(0.01);
    // Every step splits its span into at most `count` parts.
    for (const span of [1, 7, 13, 99, 101, 12_345, 9_999_999]) {
      for (const count of [2, 3, 4, 6]) expect(span / niceStep(span, count)).toBeLessThanOrEqual(count);
    }
  });

  it('niceStep: an empty or invalid span gets a step of 1 rather than zero or NaN', () => {
    expect(niceStep(0, 3)).toBe(1);
    expect(niceStep(-5, 3)).toBe(1);
    expect(niceStep(Number.NaN, 3)).toBe(1);
  });

  it('formatBucket: a bucket width in words', () => {
    expect(formatBucket(60)).toBe('minute');
    expect(formatBucket(300)).toBe('5 min');
    expect(formatBucket(900)).toBe('15 min');
    expect(formatBucket(3600)).toBe('hour');
    expect(formatBucket(21_600)).toBe('6 h');
    expect(formatBucket(86_400)).toBe('day');
    expect(formatBucket(90)).toBe('90 s');
  });
});
