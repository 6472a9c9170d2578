import { ACTION_TYPE_NAMES } from '../admin-changes/admin-change.types';
import { ARCHIVER_STAGE_NAMES, CASE_CREATION_STAGE_NAMES } from '../telemetry/telemetry.types';
import { enumNames } from './enum-names';

enum Sample {
  First = 1,
  Third = 3,
}

describe('enumNames', () => {
  it('names a numeric enum by value, without its reverse-mapped keys', () => {
    expect(enumNames(Sample)).toEqual({ 1: 'First', 3: 'Third' });
  });

  it('gives the code tables the names they had as literals (contract 18; service.md 4.3)', () => {
    expect(ACTION_TYPE_NAMES).toEqual({
      1: 'TenantCreated', 2: 'TenantChanged', 3: 'RoleCreated', 4: 'RoleChanged', 5: 'UserCreated', 6: 'UserChanged',
      7: 'UserDeleted', 8: 'PasswordSetByAdministrator', 9: 'PasswordChanged', 10: 'ApiKeyCreated', 11: 'ApiKeyRevoked',
      12: 'TokensRevoked', 13: 'SessionEnded', 14: 'RowsAdopted', 15: 'SinkCreated', 16: 'SinkChanged', 17: 'SinkDeleted',
      18: 'SinkReplayed', 19: 'PasskeyRegistered', 20: 'PasskeyRemoved',
    });
    expect(ARCHIVER_STAGE_NAMES).toEqual({ 1: 'BuildArchiveJson', 2: 'CaseCreationDispatch', 3: 'RdbmsArchiveWrite', 4: 'BulkCopyArchiveBuffer' });
    expect(CASE_CREATION_STAGE_NAMES).toEqual({ 1: 'ExistingCasePriorityLookup', 2: 'WorkflowStatusLookupAndPersist', 3: 'Notification', 4: 'HttpEndpoint' });
  });
});
