import { ADMIN_CHANGE_TABLE } from '../admin-changes/admin-change.table';
import { USER_LOGIN_TABLE, USER_LOGOUT_TABLE } from './audit.tables';

/**
 * The audit reads are built from the canonical column lists (audit-log/canonical.ts); their rows are
 * contract 9's and 18's, member for member and in this order (the CSV header is this order too).
 */
describe('audit reads built from the canonical columns', () => {
  const members = (table: { columns: { name: string }[] }) => table.columns.map((c) => c.name);

  it('UserLogin serves contract 9 rows, in its order', () => {
    expect(members(USER_LOGIN_TABLE)).toEqual([
      'id', 'createdDate', 'createdUser', 'tenantRegistryId', 'failed', 'authenticationTypeId', 'authenticationType',
      'failureTypeId', 'failureReason', 'failureMessage', 'remoteIp', 'localIp', 'userAgent',
    ]);
    expect(USER_LOGIN_TABLE.columns.filter((c) => c.kind === 'date').map((c) => c.name)).toEqual(['createdDate']);
    expect(USER_LOGIN_TABLE.columns.find((c) => c.name === 'failed')!.sql).toBe('t."Failed"');
    expect(USER_LOGIN_TABLE.columns.find((c) => c.name === 'failureReason')!.lookup!.code).toBe('FailureTypeId');
  });

  it('UserLogout serves contract 9 rows, in its order', () => {
    expect(members(USER_LOGOUT_TABLE)).toEqual([
      'id', 'createdDate', 'createdUser', 'tenantRegistryId', 'reasonId', 'reason', 'outcomeId', 'outcome', 'remoteIp', 'localIp',
      'userAgent', 'sessionStartDate', 'sessionSeconds', 'cutByUser', 'message',
    ]);
    expect(USER_LOGOUT_TABLE.columns.filter((c) => c.kind === 'date').map((c) => c.name)).toEqual(['createdDate', 'sessionStartDate']);
    expect(USER_LOGOUT_TABLE.columns.find((c) => c.name === 'sessionSeconds')!.sql).toBe(
      `floor(extract(epoch FROM (t."CreatedDate" - t."SessionStartDate")))::bigint`,
    );
  });

  it('AdminChange serves contract 18 rows, in its order', () => {
    expect(members(ADMIN_CHANGE_TABLE)).toEqual([
      'id', 'createdDate', 'createdUser', 'userRegistryId', 'tenantRegistryId', 'credentialTypeId', 'credentialType', 'credentialId',
      'actionTypeId', 'actionType', 'targetTable', 'targetId', 'targetName', 'targetTenantRegistryId', 'failed', 'changes', 'remoteIp',
      'localIp', 'userAgent',
    ]);
    expect(ADMIN_CHANGE_TABLE.columns.find((c) => c.name === 'changes')!.sql).toBe('t."Changes"::json');
  });
});
