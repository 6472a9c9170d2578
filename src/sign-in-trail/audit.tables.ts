import { AUDIT_COLUMNS, CanonicalColumnName } from '../audit-log/canonical';
import { codeFilter, lookupOf, ReadTable, servedColumns } from '../reads/read-table';
import { AUTHENTICATION_TYPE_NAMES, FAILURE_TYPE_NAMES, LOGOUT_OUTCOME_NAMES, LOGOUT_REASON_NAMES } from './audit.types';

/**
 * The columns `search` matches, per audit table, in the order the stored "SearchText" joins them. The
 * trigger that fills "SearchText" was written by migration 1764400000000-AuditSearchText with its own
 * copy of these lists (a migration never changes); test/audit-search-columns.e2e-spec.ts fails when
 * the two drift, so a new searched column means a new migration and a change here.
 */
export const AUDIT_SEARCH_COLUMNS = {
  UserLogin: ['CreatedUser', 'RemoteIp', 'UserAgent', 'FailureMessage'],
  UserLogout: ['CreatedUser', 'CutByUser', 'RemoteIp', 'UserAgent', 'Message'],
} as const satisfies { [T in 'UserLogin' | 'UserLogout']: readonly CanonicalColumnName<T>[] };

const searched = (columns: readonly string[]): string[] => columns.map((column) => `t."${column}"`);

const TENANT_SCOPED = { kind: 'tenant', tenantColumn: 'TenantRegistryId', userColumn: 'UserRegistryId' } as const;

/**
 * GET /api/UserLogin (contract 9): one row per sign-in attempt, its members built from the one list of
 * UserLogin's columns (its canonical order, audit-log/canonical.ts) as AdminChange's read is: the
 * user's id left out (contract 9's rows do not carry it), each code followed by its name.
 */
export const USER_LOGIN_TABLE: ReadTable = {
  table: 'UserLogin',
  dateColumn: 'CreatedDate',
  columns: servedColumns(AUDIT_COLUMNS.UserLogin, {
    omit: ['UserRegistryId'],
    // Contract 9's rows list failed before the scheme; its canonical form after it.
    before: { Failed: 'AuthenticationTypeId' },
    then: {
      AuthenticationTypeId: [lookupOf('authenticationType', 'AuthenticationTypeId', AUTHENTICATION_TYPE_NAMES)],
      FailureTypeId: [lookupOf('failureReason', 'FailureTypeId', FAILURE_TYPE_NAMES)],
    },
  }),
  filters: [
    { param: 'failed', sql: 't."Failed"', type: 'boolean', description: 'true: failed attempts only; false: successful ones only.' },
    codeFilter('failureTypeId', 'FailureTypeId', FAILURE_TYPE_NAMES, 'Failed attempts of this FailureTypeId only (service.md 2.3)'),
  ],
  searchColumns: searched(AUDIT_SEARCH_COLUMNS.UserLogin),
  searchText: 't."SearchText"',
  searchLookups: ['failureReason', 'authenticationType'],
  statistics: [],
  access: TENANT_SCOPED,
};

/**
 * GET /api/UserLogout (contract 9): one row per session cut, built like USER_LOGIN_TABLE from the one
 * list of UserLogout's columns; the session's length in seconds follows its start.
 */
export const USER_LOGOUT_TABLE: ReadTable = {
  table: 'UserLogout',
  dateColumn: 'CreatedDate',
  columns: servedColumns(AUDIT_COLUMNS.UserLogout, {
    omit: ['UserRegistryId'],
    then: {
      ReasonId: [lookupOf('reason', 'ReasonId', LOGOUT_REASON_NAMES)],
      OutcomeId: [lookupOf('outcome', 'OutcomeId', LOGOUT_OUTCOME_NAMES)],
      SessionStartDate: [{ name: 'sessionSeconds', sql: `floor(extract(epoch FROM (t."CreatedDate" - t."SessionStartDate")))::bigint` }],
    },
  }),
  filters: [
    codeFilter('reasonId', 'ReasonId', LOGOUT_REASON_NAMES, 'Rows of this ReasonId only (service.md 2.4; 4: one session ended, contract 14)'),
  ],
  searchColumns: searched(AUDIT_SEARCH_COLUMNS.UserLogout),
  searchText: 't."SearchText"',
  searchLookups: ['reason', 'outcome'],
  statistics: [],
  access: TENANT_SCOPED,
};
