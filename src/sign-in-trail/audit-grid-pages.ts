import { codeColumn, codeFilter, dateColumn, GridPage, numberColumn, textColumn } from '../reads/grid-page';

/**
 * The grid pages of the two audit trails (contract 9): what the pages show of USER_LOGIN_TABLE and
 * USER_LOGOUT_TABLE (audit.tables.ts), served to them with the telemetry tables' pages
 * (web/page-tables.ts, decision 0028). Their route and statistics are the read's.
 */
export const AUDIT_GRID_PAGES: Record<'UserLogin' | 'UserLogout', Omit<GridPage, 'api' | 'statistics'>> = {
  UserLogin: {
    search: 'User, address, user agent or reason',
    filters: [
      { param: 'failed', label: 'Result', all: 'All results', options: [['false', 'Succeeded'], ['true', 'Failed']] },
      codeFilter('failureTypeId', 'Failure reason', 'Any reason', 'failureReasons'),
    ],
    columns: [
      dateColumn('createdDate', 'Date'),
      textColumn('createdUser', 'User'),
      { field: 'failed', label: 'Result', type: 'outcome' },
      codeColumn('failureReason', 'Failure reason', 'failureReasons', { type: 'failureReason' }),
      codeColumn('authenticationType', 'Scheme', 'authenticationTypes'),
      textColumn('failureMessage', 'Provider message', { wide: true, optional: true }),
      textColumn('remoteIp', 'Remote address'),
      textColumn('localIp', 'Local address', { optional: true }),
      textColumn('userAgent', 'Device', { type: 'agent' }),
    ],
  },
  UserLogout: {
    search: 'User, cut by, address, user agent, reason or message',
    filters: [codeFilter('reasonId', 'Reason', 'Any reason', 'logoutReasons')],
    columns: [
      dateColumn('createdDate', 'Date'),
      textColumn('createdUser', 'User'),
      codeColumn('reason', 'Reason', 'logoutReasons'),
      codeColumn('outcome', 'Outcome', 'logoutOutcomes'),
      textColumn('cutByUser', 'Cut by'),
      dateColumn('sessionStartDate', 'Session start', { type: 'sessionStart' }),
      numberColumn('sessionSeconds', 'Session length', { type: 'sessionLength' }),
      textColumn('remoteIp', 'Remote address'),
      textColumn('localIp', 'Local address', { optional: true }),
      textColumn('userAgent', 'Device', { type: 'agent', optional: true }),
      textColumn('message', 'Message', { wide: true }),
    ],
  },
};
