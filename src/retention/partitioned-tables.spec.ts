import { PARTITIONED_AUDIT_TABLES, PARTITIONED_TABLES } from './partition-plan';
import { TELEMETRY_TABLES } from '../telemetry/telemetry.tables';
import { RETAINED_TABLES } from './partitioned-tables';

describe('the tables retention keeps', () => {
  it('include every table the partition migrations converted, with the same period and kind', () => {
    for (const converted of PARTITIONED_TABLES) expect(RETAINED_TABLES).toContainEqual(converted);
  });

  it('are the audit trails and every described telemetry table, each once', () => {
    const names = RETAINED_TABLES.map((t) => t.table);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual([...PARTITIONED_AUDIT_TABLES.map((t) => t.table), ...TELEMETRY_TABLES.map((t) => t.read.table)]);
  });
});
