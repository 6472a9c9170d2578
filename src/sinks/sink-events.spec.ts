import { createHash } from 'node:crypto';
import { cefLine, cefValue, epochMilliseconds, octetCounted, ocsfEvent, ocsfJson, SealedLeaf, syslogMessage, testEvent } from './sink-events';
import { factsOf } from './event-facts';

const source = { origin: 'transaction-monitoring/audit/7', version: '0.1.0', instance: 'node a' };
const hash = (s: string) => createHash('sha256').update(s).digest();
const login = (row: Record<string, string | boolean | null>, leafIndex = 42): SealedLeaf => ({
  leafIndex,
  table: 'UserLogin',
  rowId: '9',
  rowDate: '2026-11-25T19:19:32.123999Z',
  rowHash: hash('row').toString('base64'),
  leafHash: hash('leaf').toString('base64'),
  row: { Id: '9', CreatedDate: '2026-11-25T19:19:32.123999Z', CreatedUser: 'alice', UserRegistryId: '7', TenantRegistryId: '1', AuthenticationTypeId: '1', Failed: false, FailureTypeId: null, FailureMessage: null, RemoteIp: '203.0.113.9', LocalIp: '10.0.0.5', UserAgent: 'curl/8.5.0', ...row },
  canonical: '["UserLogin","9"]',
  treeSize: 50,
  rootHash: hash('root').toString('base64'),
});

describe('OCSF events (contract 19)', () => {
  it('a sign-in: class 3002 activity 1, success, the user, endpoint, agent, protocol, metadata and the leaf with its checkpoint', () => {
    const event = ocsfEvent(login({}), source);
    expect(event).toEqual({
      class_uid: 3002,
      class_name: 'Authentication',
      category_uid: 3,
      category_name: 'Identity & Access Management',
      activity_id: 1,
      activity_name: 'Logon',
      type_uid: 300201,
      time: Date.UTC(2026, 10, 25, 19, 19, 32, 123),
      status_id: 1,
      status: 'Success',
      severity_id: 1,
      severity: 'Informational',
      user: { name: 'alice', uid: '7' },
      src_endpoint: { ip: '203.0.113.9' },
      http_request: { user_agent: 'curl/8.5.0' },
      auth_protocol: 'Username and Password',
      auth_protocol_id: 99,
      metadata: { uid: 'transaction-monitoring/audit/7/42', version: '1.3.0', product: { name: 'transaction-monitoring', vendor_name: 'transaction-monitoring', version: '0.1.0' }, log_name: 'UserLogin' },
      unmapped: {
        leafIndex: 42,
        leafHash: hash('leaf').toString('base64'),
        leafRecord: `UserLogin\n9\n2026-11-25T19:19:32.123999Z\n${hash('row').toString('base64')}\n`,
        canonical: '["UserLogin","9"]',
        treeSize: 50,
        rootHash: hash('root').toString('base64'),
      },
    });
  });

  it('a failed sign-in: status 2 with the reason name, severity 3', () => {
    const event = ocsfEvent(login({ Failed: 't', FailureTypeId: '5' }), source);
    expect(event).toMatchObject({ status_id: 2, status_detail: 'Password did not match', severity_id: 3 });
  });

  it('a logout, a failed revocation, a retention run, a removed row', () => {
    const logout = (outcome: string): SealedLeaf => ({ ...login({}), table: 'UserLogout', row: { CreatedUser: 'bob', UserRegistryId: '3', ReasonId: '1', OutcomeId: outcome, RemoteIp: null, UserAgent: null } });
    expect(ocsfEvent(logout('1'), source)).toMatchObject({ class_uid: 3002, activity_id: 2, activity_name: 'Logoff', status_id: 1, user: { name: 'bob', uid: '3' } });
    expect(ocsfEvent(logout('3'), source)).toMatchObject({ status_id: 2, status_detail: 'RevocationFailed', severity_id: 3 });
    expect(ocsfEvent(logout('3'), source)).not.toHaveProperty('src_endpoint');
    const run = ocsfEvent({ ...login({}), table: 'AuditRetentionRun', row: { Id: '1', TableName: 'UserLogin' } }, source);
    expect(run).toMatchObject({ class_uid: 6003, activity_id: 4, status_id: 1 });
    expect(run).not.toHaveProperty('user');
    const removed = ocsfEvent({ ...login({}), row: null, canonical: null }, source);
    expect(removed).toMatchObject({ class_uid: 3002, time: Date.UTC(2026, 10, 25, 19, 19, 32, 123), unmapped: { canonical: null, leafIndex: 42 } });
    expect(removed).not.toHaveProperty('user');
  });

  it('AdminChange by TargetTable: 3001 accounts, 3005 roles, 6003 the rest; actor and target user; refused = failure', () => {
    const change = (row: Record<string, string | boolean | null>) => ({ ...login({}), table: 'AdminChange', row: { CreatedUser: 'admin', UserRegistryId: '1', Failed: false, ActionTypeId: '6', TargetTable: 'UserRegistry', TargetId: '5', TargetName: 'carol', RemoteIp: '198.51.100.1', UserAgent: 'ua', ...row } });
    expect(ocsfEvent(change({}), source)).toMatchObject({ class_uid: 3001, severity_id: 2, status_id: 1, user: { name: 'carol', uid: '5' }, actor: { user: { name: 'admin', uid: '1' } } });
    expect(ocsfEvent(change({ TargetTable: 'RoleRegistry', ActionTypeId: '4' }), source)).toMatchObject({ class_uid: 3005 });
    expect(ocsfEvent(change({ TargetTable: 'SecuritySink', ActionTypeId: '15' }), source)).toMatchObject({ class_uid: 6003, activity_id: 1 });
    expect(ocsfEvent(change({ TargetTable: 'TenantRegistry', ActionTypeId: '2' }), source)).toMatchObject({ class_uid: 6003, activity_id: 3 });
    expect(ocsfEvent(change({ Failed: true }), source)).toMatchObject({ status_id: 2, status_detail: 'Refused', severity_id: 3 });
    expect(cefLine(change({}), source)).toMatch(/^CEF:0\|transaction-monitoring\|security\|0\.1\.0\|AdminChange:6\|Administrative change\|5\|.* suser=admin /);
    expect(factsOf('AdminChange', null).classUid).toBe(6003);
  });

  it('the event text is exactly what JSON.stringify writes of the event: keys in order, hostile strings escaped alike', () => {
    const hostile = 'q"b\\s\nl\u2028\ud800\u0001é😀</script>';
    const change = (row: Record<string, string | boolean | null>): SealedLeaf => ({
      ...login({}),
      table: 'AdminChange',
      row: { CreatedUser: null, UserRegistryId: '1', ActionTypeId: '6', TargetTable: 'UserRegistry', TargetId: '5', TargetName: null, Failed: false, RemoteIp: null, UserAgent: null, ...row },
    });
    const leaves: SealedLeaf[] = [
      login({}),
      login({ Failed: true, FailureTypeId: null, FailureMessage: hostile, CreatedUser: hostile, RemoteIp: hostile, UserAgent: hostile }),
      { ...login({}), rowDate: 'not a date', canonical: hostile },
      { ...login({}), row: null, canonical: null },
      change({}),
      change({ Failed: 't', TargetTable: hostile }),
      { ...login({}), table: 'AuditRetentionRun', row: { TableName: 'UserLogin' } },
    ];
    for (const leaf of leaves) {
      const text = ocsfJson(leaf, { ...source, origin: hostile });
      expect(JSON.stringify(JSON.parse(text))).toBe(text);
      expect(JSON.stringify(ocsfEvent(leaf, { ...source, origin: hostile }))).toBe(text);
    }
    expect(JSON.parse(ocsfJson(leaves[1], source))).toMatchObject({ user: { name: hostile }, src_endpoint: { ip: hostile }, http_request: { user_agent: hostile }, status_detail: hostile });
    expect(JSON.parse(ocsfJson(leaves[2], source))).toMatchObject({ time: null, unmapped: { canonical: hostile } });
    expect(JSON.parse(ocsfJson(leaves[4], source))).toMatchObject({ user: { uid: '5' }, actor: { user: { uid: '1' } } });
    expect(JSON.parse(ocsfJson(leaves[4], source)).user).toEqual({ uid: '5' });
  });

  it('time is rounded down, never up', () => {
    expect(epochMilliseconds('2026-11-25T19:19:32.999999Z')).toBe(Date.UTC(2026, 10, 25, 19, 19, 32, 999));
  });
});

describe('CEF and syslog (contract 19)', () => {
  it('the CEF line with the listed extension keys, escaped', () => {
    const line = cefLine(login({ Failed: true, FailureTypeId: '5', CreatedUser: 'a=b\\c', UserAgent: 'x\ny|z' }), { ...source, version: '1|2' });
    expect(line).toBe(
      `CEF:0|transaction-monitoring|security|1\\|2|UserLogin:5|Sign-in|7|rt=${Date.UTC(2026, 10, 25, 19, 19, 32, 123)} suser=a\\=b\\\\c src=203.0.113.9 requestClientApplication=x\\ny|z outcome=failure cs1Label=leafIndex cs1=42`,
    );
    expect(cefValue('a\r\n=\\')).toBe('a\\r\\n\\=\\\\');
    expect(cefLine(login({}), source)).toContain('|UserLogin:0|Sign-in|3|');
  });

  it('RFC 5424: PRI authpriv, version 1, microsecond timestamp, hostname, app, MSGID, structured data, then the event', () => {
    const message = syslogMessage(login({}), source, 'ocsf');
    const match = /^<86>1 2026-11-25T19:19:32\.123999Z node_a transaction-monitoring - UserLogin \[leaf@32473 index="42" hash="([^"]+)"\] (.*)$/.exec(message);
    expect(match).not.toBeNull();
    expect(match![1]).toBe(hash('leaf').toString('base64'));
    expect(JSON.parse(match![2]).metadata.uid).toBe('transaction-monitoring/audit/7/42');
    expect(syslogMessage(login({ Failed: true }), source, 'cef')).toMatch(/^<84>1 .* UserLogin \[leaf@32473 index="42" hash="[^"]+"\] CEF:0\|/);
  });

  it('octet counting counts bytes, not characters', () => {
    expect(octetCounted('héllo').toString('utf8')).toBe('6 héllo');
    expect(octetCounted('').toString()).toBe('0 ');
  });

  it('the test event is outside the log and says so', () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    const { json, syslog } = testEvent(source, at, 'ocsf');
    expect(json).toMatchObject({ class_uid: 6003, metadata: { log_name: 'Test' }, unmapped: { test: true } });
    expect(syslog).toMatch(/^<86>1 2026-01-02T03:04:05\.006000Z node_a transaction-monitoring - Test - \{/);
    expect(testEvent(source, at, 'cef').syslog).toMatch(/ Test - CEF:0\|transaction-monitoring\|security\|0\.1\.0\|Test:0\|/);
  });
});
