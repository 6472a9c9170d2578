import { AUDIT_COLUMNS } from '../audit-log/canonical';
import { codeFilter, lookupOf, ReadTable, servedColumns } from '../reads/read-table';
import { ACTION_TYPE_NAMES, ADMIN_CHANGE_TARGET_TABLES, CREDENTIAL_TYPE_NAMES } from './admin-change.types';

/**
 * GET /api/AdminChange (contract 18), built from the one list of AdminChange's columns (its canonical
 * order, audit-log/canonical.ts): each column in camelCase, a code followed by its name, `changes` as
 * the JSON object it holds (json, written through as is, so its bytes are the sealed ones).
 */
export const ADMIN_CHANGE_TABLE: ReadTable = {
  table: 'AdminChange',
  dateColumn: 'CreatedDate',
  columns: servedColumns(AUDIT_COLUMNS.AdminChange, {
    replace: { Changes: { name: 'changes', sql: `t."Changes"::json` } },
    then: {
      CredentialTypeId: [lookupOf('credentialType', 'CredentialTypeId', CREDENTIAL_TYPE_NAMES)],
      ActionTypeId: [lookupOf('actionType', 'ActionTypeId', ACTION_TYPE_NAMES)],
    },
  }),
  filters: [
    { param: 'actorUserRegistryId', sql: 't."UserRegistryId"', type: 'integer', description: 'Changes made by this user only.' },
    { param: 'targetTable', sql: 't."TargetTable"', type: 'text', texts: ADMIN_CHANGE_TARGET_TABLES, description: 'Changes to rows of this table only.' },
    { param: 'targetId', sql: 't."TargetId"', type: 'integer', description: 'Changes to the row with this id only (with targetTable: the history of one item).' },
    codeFilter('actionTypeId', 'ActionTypeId', ACTION_TYPE_NAMES, 'Changes of this ActionTypeId only (contract 18)'),
    { param: 'failed', sql: 't."Failed"', type: 'boolean', description: 'true: refused writes only; false: changes made only.' },
  ],
  searchColumns: ['t."CreatedUser"', 't."TargetName"', 't."Changes"'],
  searchText: 't."SearchText"',
  searchLookups: ['actionType'],
  statistics: [],
  access: { kind: 'tenants', tenantColumns: ['TenantRegistryId', 'TargetTenantRegistryId'] },
};
