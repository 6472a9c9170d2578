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

// Column kinds: date, text, agent (a User-Agent shown as the device it names, the full text one tap
// away), number (with `unit: 'µs'` for durations shown in ms/s/min), guid (a
// short form with the full value on hover), outcome (UserLogin's Failed flag). `optional` columns
// start hidden (the Columns menu shows them); `wide` text is cut to one line with the full text on hover.
const date = (field, label, extra = {}) => ({ field, label, type: 'date', ...extra });
const text = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });
const number = (field, label, extra = {}) => ({ field, label, type: 'number', ...extra });
const micros = (field, label, extra = {}) => number(field, label, { unit: 'µs', ...extra });
const guid = (field, label, extra = {}) => ({ field, label, type: 'guid', ...extra });
// Codes are shown (and sorted) by the name the row carries next to them.
const code = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });

// The chart over time of each telemetry page (contract 17): the measures it can draw (`column` is
// the Series route's column; `mean` and `max` the point fields drawn as the solid and dashed line)
// and what it can draw one line per (`by`). Names of stages, queues and models come with the answer.
const timeMeasure = (column, label) => ({ label, column, unit: 'µs', mean: 'mean', max: 'max' });
const countMeasure = (column, label) => ({ label, column, mean: 'mean', max: 'max' });
/**
 * The stage counters: the time an invocation takes, as the mean per invocation (TotalMicroseconds over
 * InvokeCount, the route's meanMicroseconds) beside the slowest one in the bucket (max of MaxMicroseconds).
 */
const counterMeasures = [
  { label: 'Time per invocation', column: 'maxMicroseconds', unit: 'µs', mean: 'meanMicroseconds', max: 'max', meanLabel: 'mean per invocation', maxLabel: 'slowest invocation' },
  { label: 'Invocations', column: 'invokeCount', mean: 'invocations', max: null, meanLabel: 'invocations', whole: true },
];
const BY_STAGE = { param: 'stageId', label: 'Stage' };
const BY_MODEL = { param: 'entityAnalysisModelGuid', label: 'Model' };
const BY_INSTANCE = { param: 'instance', label: 'Instance' };

const stageFilter = (stages) => ({ param: 'stageId', label: 'Stage', all: 'All stages', options: stages });
/** Models are named from the server (the Series route, grouped by model): no list of them lives here. */
const modelFilter = { param: 'entityAnalysisModelGuid', label: 'Model', all: 'All models', lookup: 'models' };
const counterColumns = [
  micros('totalMicroseconds', 'Total'),
  micros('minMicroseconds', 'Min'),
  micros('maxMicroseconds', 'Max'),
  number('invokeCount', 'Invocations'),
];
const counterStatistics = ['totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount'];

/** The two Redis event logs: what the client saw happen to its connections (contract 10). */
function redisEvents(api) {
  return {
    api,
    search: 'Event, endpoint or message',
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred', { optional: true }),
      text('eventName', 'Event'),
      text('endpoint', 'Endpoint'),
      text('message', 'Message', { wide: true }),
      text('instance', 'Instance'),
    ],
    statistics: [],
    // No statistics columns: the chart counts events.
    chart: { measures: [{ label: 'Events', column: null, mean: 'count', max: null, meanLabel: 'events', whole: true }], by: [BY_INSTANCE] },
  };
}

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
      text('userAgent', 'Device', { type: 'agent' }),
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
      text('userAgent', 'Device', { type: 'agent', optional: true }),
      text('message', 'Message', { wide: true }),
    ],
    statistics: [],
  },
  ArchiverStagePerformanceCounter: {
    api: '/api/ArchiverStagePerformanceCounter',
    search: 'Model name',
    filters: [stageFilter(ARCHIVER_STAGES), modelFilter],
    // The model by name (captured with the counter, contract 17), its GUID shortened under it.
    columns: [date('createdDate', 'Date'), { field: 'entityAnalysisModelName', label: 'Model', type: 'model' }, code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
    chart: { measures: counterMeasures, by: [BY_STAGE, BY_MODEL, BY_INSTANCE] },
  },
  ArchiverWarning: {
    api: '/api/ArchiverWarning',
    filters: [stageFilter(ARCHIVER_STAGES), modelFilter],
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
    chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')], by: [BY_STAGE, BY_MODEL, BY_INSTANCE] },
  },
  CaseCreationStagePerformanceCounter: {
    api: '/api/CaseCreationStagePerformanceCounter',
    filters: [stageFilter(CASE_CREATION_STAGES)],
    columns: [date('createdDate', 'Date'), code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
    chart: { measures: counterMeasures, by: [BY_STAGE, BY_INSTANCE] },
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
    chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')], by: [BY_STAGE, BY_INSTANCE] },
  },
  CaptureQueueHealth: {
    api: '/api/CaptureQueueHealth',
    filters: [{ param: 'queueId', label: 'Queue', all: 'All queues', options: QUEUES }],
    columns: [date('createdDate', 'Date'), code('queueName', 'Queue'), number('queueDepth', 'Depth'), number('droppedCount', 'Dropped'), text('instance', 'Instance')],
    statistics: ['queueDepth', 'droppedCount'],
    chart: { measures: [countMeasure('queueDepth', 'Depth'), countMeasure('droppedCount', 'Dropped')], by: [{ param: 'queueId', label: 'Queue' }, BY_INSTANCE] },
  },
  ModelInvokeWarning: {
    api: '/api/ModelInvokeWarning',
    search: 'Model name or message',
    dateLabel: 'occurred',
    filters: [modelFilter],
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
    chart: { measures: [timeMeasure('elapsedMicroseconds', 'Elapsed'), timeMeasure('sinceLastEntryMicroseconds', 'Since last entry')], by: [BY_MODEL, BY_INSTANCE] },
  },
  OpenTelemetryMetric: {
    api: '/api/OpenTelemetryMetric',
    search: 'Instrument name',
    // One row per instrument series (name + tags) per minute: what was recorded in that minute.
    columns: [
      date('createdDate', 'Date'),
      text('name', 'Instrument'),
      { field: 'tags', label: 'Tags', type: 'tags' },
      number('count', 'Count'),
      number('sum', 'Sum'),
      number('min', 'Min'),
      number('max', 'Max'),
      text('instance', 'Instance'),
    ],
    statistics: ['count', 'sum', 'min', 'max'],
    // Instruments of different units share the table: the chart counts recordings, and the grid's
    // search narrows to one instrument.
    chart: { measures: [countMeasure('count', 'Recordings per row'), countMeasure('sum', 'Sum'), countMeasure('max', 'Max')], by: [BY_INSTANCE] },
  },
  RedisConnectionEvent: redisEvents('/api/RedisConnectionEvent'),
  RedisSentinelEvent: redisEvents('/api/RedisSentinelEvent'),
};
