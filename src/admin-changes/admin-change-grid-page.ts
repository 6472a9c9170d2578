import { codeColumn, codeFilter, dateColumn, GridPage, textColumn } from '../reads/grid-page';
import { ADMIN_CHANGE_TARGET_TABLES } from './admin-change.types';

/**
 * The grid page of the administrative changes (contract 18): what the page shows of
 * ADMIN_CHANGE_TABLE (admin-change.table.ts), served with the other grid pages (web/page-tables.ts,
 * decision 0028). `changes` is drawn as a before/after table (cell kind `changes`, grid-cells.js);
 * targetTable and targetId are the filters the Tenants, Roles and Users pages link with (the history
 * of one item).
 */
export const ADMIN_CHANGE_GRID_PAGE: Omit<GridPage, 'api' | 'statistics'> = {
  search: 'Actor, target or changed values',
  filters: [
    codeFilter('actionTypeId', 'Action', 'Any action', 'actionTypes'),
    { param: 'targetTable', label: 'Target table', all: 'Any table', options: ADMIN_CHANGE_TARGET_TABLES.map((t) => [t, t]) },
    { param: 'targetId', label: 'Target id', all: 'Any', input: 'integer' },
    { param: 'failed', label: 'Result', all: 'All results', options: [['false', 'Made'], ['true', 'Refused']] },
  ],
  columns: [
    dateColumn('createdDate', 'Date'),
    textColumn('createdUser', 'Actor'),
    codeColumn('actionType', 'Action', 'actionTypes'),
    textColumn('targetTable', 'Target table', { optional: true }),
    textColumn('targetName', 'Target', { sub: 'targetTable' }),
    { field: 'failed', label: 'Result', type: 'outcome' },
    { field: 'changes', label: 'Changes', type: 'changes', unsorted: true },
    codeColumn('credentialType', 'Credential', 'credentialTypes', { optional: true }),
    textColumn('remoteIp', 'Remote address'),
    textColumn('localIp', 'Local address', { optional: true }),
    textColumn('userAgent', 'Device', { type: 'agent', optional: true }),
  ],
};
