// The description of every grid page (contract 9, 10): its API route, toolbar filters, columns and
// statistics columns. One generic module (grid-page.js) draws them all.

const ARCHIVER_STAGES = [
  [1, 'BuildArchiveJson'],
  [2, 'CaseCreationDispatch'],
  [3, 'RdbmsArchiveWrite'],
  [4, 'BulkCopyArchiveBuffer'],
];
const CASE_CREATION_STAGES = [
  [1, 'ExistingCasePriorityLookup'],
  [2, 'WorkflowStatusLookupAndPersist'],
  [3, 'Notification'],
  [4, 'HttpEndpoint'],
];
const QUEUES = [
  [1, 'ModelInvokeWarning'],
  [2, 'CaseCreationWarning'],
  [3, 'ArchiverWarning'],
  [4, 'RedisSentinelEvent'],
  [5, 'RedisConnectionEvent'],
  [6, 'OpenTelemetryMetric'],
];

/**
 * The failure reasons of UserLogin (service.md 2.3, contract 7 and 13), by FailureTypeId, worded as
 * the API's failureReason member so the filter and the grid say the same thing.
 */
export const FAILURE_REASONS = [
  [1, 'No user registry entry matches the supplied username'],
  [2, 'User registry entry is not Active'],
  [3, 'User registry entry is Password Locked'],
  [4, 'Password expired and no new password supplied'],
  [5, 'Password did not match'],
  [6, 'No password supplied'],
  [7, 'Identity provider ticket had no usable identity claim'],
  [8, 'Remote or identity-provider failure'],
  [9, 'Local authentication or token validation failed'],
  [10, 'Internal error while processing the ticket'],
  [11, 'Second factor rejected'],
  [12, 'Throttled'],
];

/** The reasons of UserLogout (service.md 2.4, contract 14), by ReasonId, worded as the API's reason member. */
export const LOGOUT_REASONS = [
  [1, 'The user logged out'],
  [2, 'An administrator revoked the sessions'],
  [3, 'A password change revoked the sessions'],
  [4, 'One session was ended'],
];

/** FailureTypeId 4: how a forced password change is asked for, not an attack (see grid-page.js). */
export const PASSWORD_CHANGE_REQUESTED = 4;

/** What a reason means where its short name does not say it (shown under it in the grid). */
export const FAILURE_NOTES = {
  4: 'Expected, not an attack: a new, reset or expired password must be changed, and this attempt did not yet bring an acceptable new one (the sign-in page then asks for it).',
  12: 'Too many failed sign-ins from this address recently (SignInThrottle): refused without checking the password.',
};

// Column kinds: date, text, number (with `unit: 'µs'` for durations shown in ms/s/min), guid (a
// short form with the full value on hover), outcome (UserLogin's Failed flag). `optional` columns
// start hidden (the Columns menu shows them); `wide` text is cut to one line with the full text on hover.
const date = (field, label, extra = {}) => ({ field, label, type: 'date', ...extra });
const text = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });
const number = (field, label, extra = {}) => ({ field, label, type: 'number', ...extra });
const micros = (field, label, extra = {}) => number(field, label, { unit: 'µs', ...extra });
const guid = (field, label, extra = {}) => ({ field, label, type: 'guid', ...extra });
// Codes are shown (and sorted) by the name the row carries next to them.
const code = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });

const stageFilter = (stages) => ({ param: 'stageId', label: 'Stage', all: 'All stages', options: stages });
const counterColumns = [
  micros('totalMicroseconds', 'Total'),
  micros('minMicroseconds', 'Min'),
  micros('maxMicroseconds', 'Max'),
  number('invokeCount', 'Invocations'),
];
const counterStatistics = ['totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount'];

export const GRIDS = {
  UserLogin: {
    api: '/api/UserLogin',
    search: 'User, address, user agent or reason',
    filters: [
      { param: 'failed', label: 'Result', all: 'All results', options: [['false', 'Succeeded'], ['true', 'Failed']] },
      { param: 'failureTypeId', label: 'Failure reason', all: 'Any reason', options: FAILURE_REASONS },
    ],
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      { field: 'failed', label: 'Result', type: 'outcome' },
      code('failureReason', 'Failure reason', { type: 'failureReason' }),
      code('authenticationType', 'Scheme'),
      text('failureMessage', 'Provider message', { wide: true, optional: true }),
      text('remoteIp', 'Remote address'),
      text('localIp', 'Local address', { optional: true }),
      text('userAgent', 'User agent', { wide: true }),
    ],
    statistics: [],
  },
  UserLogout: {
    api: '/api/UserLogout',
    search: 'User, cut by, address, user agent, reason or message',
    filters: [{ param: 'reasonId', label: 'Reason', all: 'Any reason', options: LOGOUT_REASONS }],
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      code('reason', 'Reason'),
      code('outcome', 'Outcome'),
      text('cutByUser', 'Cut by'),
      date('sessionStartDate', 'Session start', { type: 'sessionStart' }),
      number('sessionSeconds', 'Session length', { type: 'sessionLength' }),
      text('remoteIp', 'Remote address'),
      text('localIp', 'Local address', { optional: true }),
      text('userAgent', 'User agent', { wide: true, optional: true }),
      text('message', 'Message', { wide: true }),
    ],
    statistics: [],
  },
  ArchiverStagePerformanceCounter: {
    api: '/api/ArchiverStagePerformanceCounter',
    filters: [stageFilter(ARCHIVER_STAGES)],
    // The counter table carries the model's GUID only (no name column, and names exist elsewhere only
    // for models that had a warning): a short GUID, the full one on hover.
    columns: [date('createdDate', 'Date'), guid('entityAnalysisModelGuid', 'Model'), code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
  },
  ArchiverWarning: {
    api: '/api/ArchiverWarning',
    filters: [stageFilter(ARCHIVER_STAGES)],
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred'),
      text('entityAnalysisModelName', 'Model'),
      guid('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
      code('stageName', 'Stage'),
      micros('durationMicroseconds', 'Duration'),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
  },
  CaseCreationStagePerformanceCounter: {
    api: '/api/CaseCreationStagePerformanceCounter',
    filters: [stageFilter(CASE_CREATION_STAGES)],
    columns: [date('createdDate', 'Date'), code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
  },
  CaseCreationWarning: {
    api: '/api/CaseCreationWarning',
    search: 'Case key value',
    filters: [stageFilter(CASE_CREATION_STAGES)],
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred', { optional: true }),
      text('caseWorkflowName', 'Case workflow'),
      // The key's name sits under its value: one column instead of two.
      text('caseKeyValue', 'Case key value', { sub: 'caseKey' }),
      code('stageName', 'Stage'),
      micros('durationMicroseconds', 'Duration'),
      text('destination', 'Destination', { wide: true }),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
  },
  CaptureQueueHealth: {
    api: '/api/CaptureQueueHealth',
    filters: [{ param: 'queueId', label: 'Queue', all: 'All queues', options: QUEUES }],
    columns: [date('createdDate', 'Date'), code('queueName', 'Queue'), number('queueDepth', 'Depth'), number('droppedCount', 'Dropped'), text('instance', 'Instance')],
    statistics: ['queueDepth', 'droppedCount'],
  },
  ModelInvokeWarning: {
    api: '/api/ModelInvokeWarning',
    search: 'Model name or message',
    dateLabel: 'occurred',
    columns: [
      date('occurredDate', 'Occurred'),
      text('entityAnalysisModelName', 'Model'),
      guid('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
      text('message', 'Message', { wide: true }),
      micros('elapsedMicroseconds', 'Elapsed'),
      micros('sinceLastEntryMicroseconds', 'Since last entry'),
      text('instance', 'Instance'),
    ],
    statistics: ['elapsedMicroseconds', 'sinceLastEntryMicroseconds'],
  },
};
