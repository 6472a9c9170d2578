import { auditReferenceVectors, fromBase64 } from '../../test/helpers/audit-reference';
import {
  AUDIT_COLUMNS,
  SEALED_TABLES,
  canonicalIdentity,
  canonicalRow,
  canonicalTimestampSql,
  isSealedTable,
  leafRecord,
  parseCanonicalRow,
  parseLeafRecord,
  sha256,
  type SealedTableName,
} from './canonical';
import { leafHash } from './merkle';

/** The example of contract 15, as the sealer would select it (every column as text). */
const EXAMPLE_ROW = {
  Id: '42',
  CreatedDate: '2026-11-25T19:19:32.123456Z',
  CreatedUser: 'alice',
  UserRegistryId: '7',
  TenantRegistryId: '3',
  AuthenticationTypeId: '1',
  Failed: 'f',
  FailureTypeId: null,
  FailureMessage: null,
  RemoteIp: '203.0.113.9',
  LocalIp: '10.0.0.5',
  UserAgent: 'curl/8.5.0',
};

describe('canonical form (contract 15)', () => {
  it('writes the contract example byte for byte, with hashes computed by hand (sha256sum, openssl)', () => {
    const canonical = canonicalRow('UserLogin', EXAMPLE_ROW);
    expect(canonical.toString('utf8')).toBe(
      '["UserLogin","42","2026-11-25T19:19:32.123456Z","alice",7,3,1,false,null,null,"203.0.113.9","10.0.0.5","curl/8.5.0"]',
    );
    // printf '%s' '<the line above>' | sha256sum
    const rowHash = sha256(canonical);
    expect(rowHash.toString('hex')).toBe('8a06fdfcc6ced5eebff023bb1b8ffddf50014413813e906f1b931875ea08cba5');
    const record = leafRecord('UserLogin', '42', '2026-11-25T19:19:32.123456Z', rowHash);
    expect(record.toString('utf8')).toBe('UserLogin\n42\n2026-11-25T19:19:32.123456Z\nigb9/MbO1e6/8CO7G4/931ABRBOBPpBvG5MYdeoIy6U=\n');
    // (printf '\x00'; cat record) | sha256sum
    expect(leafHash(record).toString('hex')).toBe('a0059af60eff869cd99a5efdf5e8b74629aae08a9e4b27a18c080d923f1e4255');
  });

  it("matches every row of the Go reference (encoding/json's strings, ints, booleans, nulls) byte for byte", () => {
    const vectors = auditReferenceVectors();
    expect(vectors.Leaves.length).toBeGreaterThan(10);
    for (const leaf of vectors.Leaves) {
      const table = leaf.Table as SealedTableName;
      const canonical = canonicalRow(table, leaf.Row);
      expect(canonical.toString('base64')).toBe(leaf.Canonical);
      expect(sha256(canonical).toString('base64')).toBe(leaf.RowHash);
      const record = leafRecord(table, leaf.RowID, leaf.RowCreatedDate, sha256(canonical));
      expect(record.toString('base64')).toBe(leaf.LeafRecord);
      expect(leafHash(record).toString('base64')).toBe(leaf.LeafHash);
      expect(parseLeafRecord(record)).toEqual({ table, rowId: leaf.RowID, rowCreatedDate: leaf.RowCreatedDate, rowHash: fromBase64(leaf.RowHash) });
      expect(parseCanonicalRow(canonical).table).toBe(table);
    }
  });

  it('accepts booleans as t/f or true/false and numbers as they come, with one result', () => {
    const a = canonicalRow('UserLogin', { ...EXAMPLE_ROW, Failed: 't' });
    const b = canonicalRow('UserLogin', { ...EXAMPLE_ROW, Failed: true });
    const c = canonicalRow('UserLogin', { ...EXAMPLE_ROW, Failed: 'true' });
    expect(a.equals(b) && a.equals(c)).toBe(true);
    expect(a.toString()).toContain(',1,true,null,');
  });

  it('keeps every digit of a bigint past 2^53 and escapes text as JSON.stringify does', () => {
    const run = canonicalRow('AuditRetentionRun', {
      Id: '9007199254740993',
      RunDate: '2027-01-01T00:00:05.000000Z',
      TableName: 'UserLogin',
      PartitionName: 'UserLogin_p2026_10',
      Cutoff: '2026-11-01T00:00:00.000000Z',
      RowCount: '9223372036854775807',
    });
    expect(run.toString()).toBe(
      '["AuditRetentionRun","9007199254740993","2027-01-01T00:00:05.000000Z","UserLogin","UserLogin_p2026_10","2026-11-01T00:00:00.000000Z",9223372036854775807]',
    );
    expect(parseCanonicalRow(run).row.RowCount).toBe('9223372036854775807');
    const text = canonicalRow('UserLogin', { ...EXAMPLE_ROW, UserAgent: 'a"b\\c\u2028é,1]' });
    expect(text.toString('utf8')).toContain(`${JSON.stringify('a"b\\c\u2028é,1]')}]`);
    expect(parseCanonicalRow(text).row.UserAgent).toBe('a"b\\c\u2028é,1]');
  });

  it('refuses what would render ambiguously: missing columns, bad dates, ids and ints, unknown tables', () => {
    const { UserAgent: _omitted, ...missing } = EXAMPLE_ROW;
    void _omitted;
    expect(() => canonicalRow('UserLogin', missing)).toThrow(/UserAgent: missing/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, CreatedDate: '2026-11-25 19:19:32.123456+00' })).toThrow(/canonical timestamp/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, CreatedDate: '2026-11-25T19:19:32.123Z' })).toThrow(/canonical timestamp/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, Id: '042' })).toThrow(/decimal id/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, Id: null })).toThrow(/cannot be null/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, UserRegistryId: '7.0' })).toThrow(/decimal integer/);
    expect(() => canonicalRow('UserLogin', { ...EXAMPLE_ROW, Failed: 'yes' })).toThrow(/boolean/);
    expect(() => canonicalRow('Users' as SealedTableName, EXAMPLE_ROW)).toThrow(/not an audit table/);
  });

  it('parses only exact canonical forms', () => {
    const good = canonicalRow('UserLogin', EXAMPLE_ROW);
    expect(parseCanonicalRow(good).row).toEqual({ ...EXAMPLE_ROW, Failed: false });
    for (const bad of [
      good.toString().replace(',7,', ', 7,'),
      good.toString().replace('"42"', '42'),
      good.toString().replace(',7,', ',07,'),
      good.toString().replace(',"curl/8.5.0"]', ']'),
      good.toString().replace('"UserLogin"', '"Users"'),
      `${good.toString()} `,
      '[]',
      '["UserLogin",[1]]',
    ]) {
      expect(() => parseCanonicalRow(Buffer.from(bad))).toThrow(/canonical form/);
    }
  });

  it('reads the table, id and leaf date a canonical form names', () => {
    expect(canonicalIdentity(canonicalRow('UserLogin', EXAMPLE_ROW))).toEqual({ table: 'UserLogin', id: '42', date: '2026-11-25T19:19:32.123456Z' });
    const run = canonicalRow('AuditRetentionRun', { Id: '3', RunDate: '2027-01-01T00:00:05.000000Z', TableName: 'UserLogout', PartitionName: 'p', Cutoff: '2026-11-01T00:00:00.000000Z', RowCount: '2' });
    expect(canonicalIdentity(run)).toEqual({ table: 'AuditRetentionRun', id: '3', date: '2027-01-01T00:00:05.000000Z' });
    expect(() => canonicalIdentity(Buffer.from('["UserLogin",42]'))).toThrow(/columns/);
    expect(() => canonicalIdentity(Buffer.from('{"a":1}'))).toThrow(/audit table/);
    expect(() => canonicalIdentity(Buffer.from('["UserLogin",'))).toThrow(/not JSON/);
  });

  it('parses only exact leaf records', () => {
    const hash = sha256(Buffer.from('x'));
    const good = leafRecord('UserLogout', '7', '2026-11-25T19:19:32.000001Z', hash).toString();
    expect(parseLeafRecord(Buffer.from(good)).rowId).toBe('7');
    for (const bad of [
      good.slice(0, -1),
      `${good}\n`,
      good.replace('UserLogout', 'userlogout'),
      good.replace('\n7\n', '\n07\n'),
      good.replace('.000001Z', 'Z'),
      good.replace(hash.toString('base64'), hash.subarray(0, 31).toString('base64')),
      good.replace(hash.toString('base64'), hash.toString('base64url')),
    ]) {
      expect(() => parseLeafRecord(Buffer.from(bad))).toThrow(/leaf record/);
    }
  });

  it('describes every table in contract order and renders dates in SQL as the canonical text', () => {
    expect([...SEALED_TABLES]).toEqual(['UserLogin', 'UserLogout', 'AuditRetentionRun', 'AdminChange']);
    expect(AUDIT_COLUMNS.UserLogout.map((c) => c.name)).toEqual([
      'Id', 'CreatedDate', 'CreatedUser', 'UserRegistryId', 'TenantRegistryId', 'ReasonId', 'OutcomeId',
      'RemoteIp', 'LocalIp', 'UserAgent', 'SessionStartDate', 'CutByUser', 'Message',
    ]);
    expect(AUDIT_COLUMNS.AuditRetentionRun.map((c) => c.name)).toEqual(['Id', 'RunDate', 'TableName', 'PartitionName', 'Cutoff', 'RowCount']);
    expect(isSealedTable('UserLogin') && !isSealedTable('userlogin')).toBe(true);
    expect(canonicalTimestampSql('CreatedDate')).toBe(`to_char(("CreatedDate") AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`);
    expect(canonicalTimestampSql('l."RunDate"')).toContain('(l."RunDate") AT TIME ZONE');
  });
});
