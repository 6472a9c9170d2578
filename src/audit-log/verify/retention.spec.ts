import { coveringRun, timestampMicros, type SealedRun } from './retention';

const run = (over: Partial<SealedRun>): SealedRun => ({
  id: '1',
  leafIndex: 100,
  tableName: 'UserLogin',
  cutoff: '2026-11-01T00:00:00.000000Z',
  runDate: '2026-12-01T00:00:00.000000Z',
  ...over,
});
const leaf = { index: 10, table: 'UserLogin' as const, rowCreatedDate: '2026-10-31T23:59:59.999999Z' };

describe('removed by retention (contract 15, 16)', () => {
  it('reads canonical timestamps to the microsecond', () => {
    expect(timestampMicros('1970-01-01T00:00:00.000001Z')).toBe(1);
    expect(timestampMicros('2026-11-01T00:00:00.000000Z') - timestampMicros('2026-10-31T23:59:59.999999Z')).toBe(1);
    expect(() => timestampMicros('2026-11-01T00:00:00Z')).toThrow(/canonical/);
  });

  it('counts a leaf only under a run of its table, sealed at a later leaf, with a later cutoff', () => {
    expect(coveringRun([run({})], leaf, null)?.id).toBe('1');
    expect(coveringRun([run({ tableName: 'UserLogout' })], leaf, null)).toBeNull();
    expect(coveringRun([run({ leafIndex: 10 })], leaf, null)).toBeNull();
    expect(coveringRun([run({ leafIndex: 9 })], leaf, null)).toBeNull();
    expect(coveringRun([run({ cutoff: leaf.rowCreatedDate })], leaf, null)).toBeNull();
    expect(coveringRun([run({ leafIndex: 5 }), run({ id: '2' })], leaf, null)?.id).toBe('2');
  });

  it('with an interval, only a run whose cutoff is at least that long before its run date', () => {
    const day = 86_400_000;
    expect(coveringRun([run({})], leaf, 30 * day)?.id).toBe('1');
    expect(coveringRun([run({})], leaf, 31 * day)).toBeNull();
  });
});
