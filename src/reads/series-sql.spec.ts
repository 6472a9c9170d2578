import { boundedBucketSeconds, bucketsTouched, defaultBucketSeconds } from './read-query';
import { ARCHIVER_STAGE_COUNTER_TABLE, ARCHIVER_WARNING_TABLE } from '../telemetry/telemetry.tables';
import { columnOf, usableRollup, wholeMinutes } from './series-sql';

const at = (text: string) => new Date(text);

describe('series buckets and rollup choice', () => {
  it('counts the epoch-aligned buckets a window touches and picks the default width', () => {
    const h = Date.UTC(2030, 0, 1, 8);
    expect(bucketsTouched(h, h + 3_600_000, 60)).toBe(61);
    expect(bucketsTouched(h + 1, h + 3_599_999, 60)).toBe(60);
    expect(defaultBucketSeconds(h, h + 119 * 60_000)).toBe(60);
    expect(defaultBucketSeconds(h, h + 120 * 60_000)).toBe(300);
    expect(defaultBucketSeconds(h, h + 24 * 3_600_000)).toBe(900);
    expect(defaultBucketSeconds(h, h + 10_000 * 86_400_000)).toBe(86_400);
  });

  it('raises an asked width in whole minutes until the window holds at most 5000 buckets, never beyond a day', () => {
    const day = 86_400_000;
    expect(boundedBucketSeconds(0, day, 60)).toBe(60);
    expect(boundedBucketSeconds(0, 10 * day, 60)).toBe(180);
    expect(boundedBucketSeconds(0, 10 * day, 90)).toBe(180);
    expect(boundedBucketSeconds(0, 10 * day, 3600)).toBe(3600);
    expect(boundedBucketSeconds(0, 100_000 * day, 60)).toBe(86_400);
  });

  it('splits a window into whole minutes and partial edges', () => {
    expect(wholeMinutes(at('2030-01-01T00:00:10Z'), at('2030-01-01T00:03:05Z'))).toEqual({ m0: at('2030-01-01T00:01:00Z'), m1: at('2030-01-01T00:03:00Z') });
    expect(wholeMinutes(at('2030-01-01T00:01:00Z'), at('2030-01-01T00:02:00Z'))).toEqual({ m0: at('2030-01-01T00:01:00Z'), m1: at('2030-01-01T00:02:00Z') });
    expect(wholeMinutes(at('2030-01-01T00:00:10Z'), at('2030-01-01T00:01:59Z'))).toBeNull();
  });

  it('uses a rollup only without sample or search and with every filter among its keys', () => {
    expect(columnOf('t."StageId"')).toBe('StageId');
    expect(columnOf('lower(t."X")')).toBeNull();
    const stage = { sql: 't."StageId"', value: '1', type: 'integer' as const };
    expect(usableRollup(ARCHIVER_WARNING_TABLE, { samplePercentage: 100, filters: [stage] })?.table).toBe('ArchiverWarningMinute');
    expect(usableRollup(ARCHIVER_WARNING_TABLE, { samplePercentage: 50, filters: [] })).toBeNull();
    expect(usableRollup(ARCHIVER_WARNING_TABLE, { samplePercentage: 100, filters: [], search: 'x' })).toBeNull();
    expect(usableRollup(ARCHIVER_WARNING_TABLE, { samplePercentage: 100, filters: [] }, ['t."EntityAnalysisModelInstanceEntryGuid"'])).toBeNull();
    expect(usableRollup(ARCHIVER_STAGE_COUNTER_TABLE, { samplePercentage: 100, filters: [] })).toBeNull();
  });
});
