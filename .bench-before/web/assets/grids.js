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

const date = (field, label) => ({ field, label, type: 'date' });
const text = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });
const number = (field, label) => ({ field, label, type: 'number' });
// Codes are shown (and sorted) by the name the row carries next to them.
const code = (field, label) => ({ field, label, type: 'text' });

const stageFilter = (stages) => ({ param: 'stageId', label: 'Stage', options: stages });
const counterColumns = [
  number('totalMicroseconds', 'Total (µs)'),
  number('minMicroseconds', 'Min (µs)'),
  number('maxMicroseconds', 'Max (µs)'),
  number('invokeCount', 'Invocations'),
];
const counterStatistics = ['totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount'];

export const GRIDS = {
  UserLogin: {
    api: '/api/UserLogin',
    search: 'User, address, user agent or message',
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      code('authenticationType', 'Scheme'),
      { field: 'failed', label: 'Result', type: 'outcome' },
      code('failureReason', 'Failure reason'),
      text('failureMessage', 'Failure message', { wide: true }),
      text('remoteIp', 'Remote address'),
      text('userAgent', 'User agent', { wide: true }),
    ],
    statistics: [],
  },
  UserLogout: {
    api: '/api/UserLogout',
    search: 'User, cut by, address, user agent or message',
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      code('reason', 'Reason'),
      code('outcome', 'Outcome'),
      text('cutByUser', 'Cut by'),
      date('sessionStartDate', 'Session start'),
      number('sessionSeconds', 'Session (s)'),
      text('remoteIp', 'Remote address'),
      text('userAgent', 'User agent', { wide: true }),
      text('message', 'Message', { wide: true }),
    ],
    statistics: [],
  },
  ArchiverStagePerformanceCounter: {
    api: '/api/ArchiverStagePerformanceCounter',
    filter: stageFilter(ARCHIVER_STAGES),
    columns: [date('createdDate', 'Date'), text('entityAnalysisModelGuid', 'Model'), code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
  },
  ArchiverWarning: {
    api: '/api/ArchiverWarning',
    filter: stageFilter(ARCHIVER_STAGES),
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred'),
      text('entityAnalysisModelName', 'Model'),
      text('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
      code('stageName', 'Stage'),
      number('durationMicroseconds', 'Duration (µs)'),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
  },
  CaseCreationStagePerformanceCounter: {
    api: '/api/CaseCreationStagePerformanceCounter',
    filter: stageFilter(CASE_CREATION_STAGES),
    columns: [date('createdDate', 'Date'), code('stageName', 'Stage'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
  },
  CaseCreationWarning: {
    api: '/api/CaseCreationWarning',
    search: 'Case key value',
    filter: stageFilter(CASE_CREATION_STAGES),
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred'),
      text('caseWorkflowName', 'Case workflow'),
      text('caseKey', 'Case key'),
      text('caseKeyValue', 'Case key value'),
      code('stageName', 'Stage'),
      number('durationMicroseconds', 'Duration (µs)'),
      text('destination', 'Destination', { wide: true }),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
  },
  CaptureQueueHealth: {
    api: '/api/CaptureQueueHealth',
    filter: { param: 'queueId', label: 'Queue', options: QUEUES },
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
      text('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
      text('message', 'Message', { wide: true }),
      number('elapsedMicroseconds', 'Elapsed (µs)'),
      number('sinceLastEntryMicroseconds', 'Since last entry (µs)'),
      text('instance', 'Instance'),
    ],
    statistics: ['elapsedMicroseconds', 'sinceLastEntryMicroseconds'],
  },
};
