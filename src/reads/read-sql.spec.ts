import type { Principal } from '../access/principal';
import { USER_LOGIN_TABLE } from '../sign-in-trail/audit.tables';
import { ARCHIVER_WARNING_TABLE } from '../telemetry/telemetry.tables';
import { parseReadQuery } from './read-query';
import { Params } from './read-session';
import { readStatement } from './read-sql';
import { shapeStatistics } from './read-statistics';

const landlord = { landlord: true, tenantRegistryId: 1 } as Principal;
const tenantAdmin = { landlord: false, tenantRegistryId: 7 } as Principal;

describe('read statements and statistics (pure parts of the read engine)', () => {
  it('puts every caller value in the settings, never in the SQL text', () => {
    const search = `x'); DROP TABLE "UserLogin"; --`;
    const query = parseReadQuery(USER_LOGIN_TABLE, { search, samplePercentage: '50' }, Date.UTC(2030, 0, 1), undefined);
    const p = new Params('tm_read.s0_');
    const s = readStatement(USER_LOGIN_TABLE, query, landlord, p, '42', null);
    const text = [s.from, s.scope, s.outputs, s.order].join(' ');
    expect(text).not.toContain('DROP TABLE');
    expect(p.values.some((v) => String(v.value).includes('DROP TABLE'))).toBe(true);
    expect(p.values.map((v) => v.value)).toContain('42');
    expect(s.order).toBe(`t."${USER_LOGIN_TABLE.dateColumn}" DESC, t."Id" DESC`);
  });

  it('refuses a tenant administrator a landlord-only table before any SQL is run', () => {
    const query = parseReadQuery(ARCHIVER_WARNING_TABLE, {}, Date.UTC(2030, 0, 1), undefined);
    expect(() => readStatement(ARCHIVER_WARNING_TABLE, query, tenantAdmin, new Params('tm_read.s0_'), '1', null)).toThrow();
  });

  it('shapes sorted aggregates into the contract: zeros without values, ten buckets and the median', () => {
    const shaped = shapeStatistics(['a', 'b'], [{ n: 4, mn: 0, mx: 10, m1: 2, m2: 4, mean: 4, sd: 1, p: [1, 1, 2, 2, 2, 3, 3, 3, 3] }]);
    expect(shaped.b).toEqual({ min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] });
    expect(shaped.a.median).toBe(3);
    expect(shaped.a.histogram).toHaveLength(10);
    expect(shaped.a.histogram.map((h) => h.frequency)).toEqual([1, 0, 1, 0, 0, 1, 0, 0, 0, 1]);
    expect(shaped.a.histogram[9]).toEqual({ from: 9, to: 10, frequency: 1 });
  });
});
