import {
  addPeriods,
  expiredPartitions,
  ExistingPartition,
  legacyUpperBound,
  missingAhead,
  partitionName,
  partitionsFor,
  periodStart,
  retentionCutoff,
} from './partition-plan';

const day = { table: 'CaptureQueueHealth', period: 'day', kind: 'telemetry' } as const;
const month = { table: 'UserLogin', period: 'month', kind: 'audit' } as const;
const d = (iso: string) => new Date(iso);
const part = (name: string, from: string | null, to: string | null, isDefault = false): ExistingPartition => ({
  name,
  isDefault,
  from: from === null ? null : d(from),
  to: to === null ? null : d(to),
});

describe('partition plan', () => {
  it('cuts periods at UTC day and month starts, across year ends', () => {
    expect(periodStart('day', d('2026-11-25T23:59:59.999Z'))).toEqual(d('2026-11-25T00:00:00Z'));
    expect(periodStart('month', d('2026-12-31T23:00:00Z'))).toEqual(d('2026-12-01T00:00:00Z'));
    expect(addPeriods('month', d('2026-12-01T00:00:00Z'), 2)).toEqual(d('2027-02-01T00:00:00Z'));
    expect(addPeriods('day', d('2024-02-28T00:00:00Z'), 1)).toEqual(d('2024-02-29T00:00:00Z'));
    expect(partitionName(day, d('2026-01-05T00:00:00Z'))).toBe('CaptureQueueHealth_p20260105');
    expect(partitionName(month, d('2026-01-01T00:00:00Z'))).toBe('UserLogin_p202601');
  });

  it('plans the current period and two ahead, skipping those covered (the legacy partition too)', () => {
    const now = d('2026-11-25T12:00:00Z');
    expect(missingAhead(day, now, []).map((p) => p.name)).toEqual(['CaptureQueueHealth_p20261125', 'CaptureQueueHealth_p20261126', 'CaptureQueueHealth_p20261127']);
    const existing = [part('CaptureQueueHealth_legacy', null, '2026-11-27T00:00:00Z'), part('CaptureQueueHealth_default', null, null, true)];
    expect(missingAhead(day, now, existing).map((p) => p.name)).toEqual(['CaptureQueueHealth_p20261127']);
    expect(missingAhead(month, now, []).map((p) => [p.from.toISOString(), p.to.toISOString()])[2]).toEqual(['2027-01-01T00:00:00.000Z', '2027-02-01T00:00:00.000Z']);
  });

  it('plans one partition per period of the rows found in DEFAULT, none overlapping an existing one', () => {
    const dates = [d('2019-03-04T10:00:00Z'), d('2019-03-31T23:59:59Z'), d('2026-12-15T00:00:00Z')];
    expect(partitionsFor(month, dates, []).map((p) => p.name)).toEqual(['UserLogin_p201903', 'UserLogin_p202612']);
    expect(partitionsFor(month, dates, [part('UserLogin_p202612', '2026-12-01T00:00:00Z', '2027-01-01T00:00:00Z')]).map((p) => p.name)).toEqual(['UserLogin_p201903']);
  });

  it('expires only partitions whose whole range ends at or before the cutoff, never DEFAULT, and nothing for retention 0', () => {
    const now = d('2026-11-25T12:00:00Z');
    const cutoff = retentionCutoff(now, 30 * 86_400_000)!;
    expect(cutoff).toEqual(d('2026-10-26T12:00:00Z'));
    const existing = [
      part('CaptureQueueHealth_default', null, null, true),
      part('CaptureQueueHealth_legacy', null, '2026-10-20T00:00:00Z'),
      part('CaptureQueueHealth_p20261025', '2026-10-25T00:00:00Z', '2026-10-26T00:00:00Z'),
      part('CaptureQueueHealth_p20261026', '2026-10-26T00:00:00Z', '2026-10-27T00:00:00Z'),
    ];
    expect(expiredPartitions(existing, cutoff).map((p) => p.name)).toEqual(['CaptureQueueHealth_legacy', 'CaptureQueueHealth_p20261025']);
    expect(retentionCutoff(now, 0)).toBeNull();
    expect(expiredPartitions(existing, null)).toEqual([]);
  });

  it('bounds the legacy partition after the next period, or after its newest row when that is later', () => {
    const now = d('2026-11-25T23:59:00Z');
    expect(legacyUpperBound('day', now, d('2026-11-25T23:58:00Z'))).toEqual(d('2026-11-27T00:00:00Z'));
    expect(legacyUpperBound('month', now, null)).toEqual(d('2027-01-01T00:00:00Z'));
    expect(legacyUpperBound('month', now, d('2027-03-10T00:00:00Z'))).toEqual(d('2027-04-01T00:00:00Z'));
  });
});
