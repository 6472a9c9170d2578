// The description of every grid page (contract 9, 10): its API route, toolbar filters, columns and
// statistics columns. One generic module (grid-page.js) draws them all. The names of codes (reasons,
// stages, queues) come from the server's code tables (codes.js), never from a list kept here.
import { codeOptions } from './codes.js';

// Column kinds: date, text, agent (a User-Agent shown as the device it names, the full text one tap
// away), number (with `unit: 'µs'` for durations shown in ms/s/min), guid (a
// short form with the full value on hover), outcome (UserLogin's Failed flag). `optional` columns
// start hidden (the Columns menu shows them); `wide` text is cut to one line with the full text on hover.
const date = (field, label, extra = {}) => ({ field, label, type: 'date', ...extra });
const text = (field, label, extra = {}) => ({ field, label, type: 'text', ...extra });
const number = (field, label, extra = {}) => ({ field, label, type: 'number', ...extra });
const micros = (field, label, extra = {}) => number(field, label, { unit: 'µs', ...extra });
const guid = (field, label, extra = {}) => ({ field, label, type: 'guid', ...extra });
// Codes are shown (and sorted) by the name the row carries next to them; `codes` names the server's
// code table the name comes from (codes.js), so a test can check every shown name against it.
const code = (field, label, codes, extra = {}) => ({ field, label, type: 'text', codes, ...extra });

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

/** A filter whose choices are a server code table, in its order (the name shown, the id sent). */
const codeFilter = (param, label, all, codes) => ({ param, label, all, codes, options: codeOptions(codes) });
const stageFilter = (stages) => codeFilter('stageId', 'Stage', 'All stages', stages);
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
      codeFilter('failureTypeId', 'Failure reason', 'Any reason', 'failureReasons'),
    ],
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      { field: 'failed', label: 'Result', type: 'outcome' },
      code('failureReason', 'Failure reason', 'failureReasons', { type: 'failureReason' }),
      code('authenticationType', 'Scheme', 'authenticationTypes'),
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
    filters: [codeFilter('reasonId', 'Reason', 'Any reason', 'logoutReasons')],
    columns: [
      date('createdDate', 'Date'),
      text('createdUser', 'User'),
      code('reason', 'Reason', 'logoutReasons'),
      code('outcome', 'Outcome', 'logoutOutcomes'),
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
    filters: [stageFilter('archiverStages'), modelFilter],
    // The model by name (captured with the counter, contract 17), its GUID shortened under it.
    columns: [date('createdDate', 'Date'), { field: 'entityAnalysisModelName', label: 'Model', type: 'model' }, code('stageName', 'Stage', 'archiverStages'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
    chart: { measures: counterMeasures, by: [BY_STAGE, BY_MODEL, BY_INSTANCE] },
  },
  ArchiverWarning: {
    api: '/api/ArchiverWarning',
    filters: [stageFilter('archiverStages'), modelFilter],
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred'),
      text('entityAnalysisModelName', 'Model'),
      guid('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
      code('stageName', 'Stage', 'archiverStages'),
      micros('durationMicroseconds', 'Duration'),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
    chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')], by: [BY_STAGE, BY_MODEL, BY_INSTANCE] },
  },
  CaseCreationStagePerformanceCounter: {
    api: '/api/CaseCreationStagePerformanceCounter',
    filters: [stageFilter('caseCreationStages')],
    columns: [date('createdDate', 'Date'), code('stageName', 'Stage', 'caseCreationStages'), ...counterColumns, text('instance', 'Instance')],
    statistics: counterStatistics,
    chart: { measures: counterMeasures, by: [BY_STAGE, BY_INSTANCE] },
  },
  CaseCreationWarning: {
    api: '/api/CaseCreationWarning',
    search: 'Case key value',
    filters: [stageFilter('caseCreationStages')],
    columns: [
      date('createdDate', 'Date'),
      date('occurredDate', 'Occurred', { optional: true }),
      text('caseWorkflowName', 'Case workflow'),
      // The key's name sits under its value: one column instead of two.
      text('caseKeyValue', 'Case key value', { sub: 'caseKey' }),
      code('stageName', 'Stage', 'caseCreationStages'),
      micros('durationMicroseconds', 'Duration'),
      text('destination', 'Destination', { wide: true }),
      text('instance', 'Instance'),
    ],
    statistics: ['durationMicroseconds'],
    chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')], by: [BY_STAGE, BY_INSTANCE] },
  },
  CaptureQueueHealth: {
    api: '/api/CaptureQueueHealth',
    filters: [codeFilter('queueId', 'Queue', 'All queues', 'captureQueues')],
    columns: [date('createdDate', 'Date'), code('queueName', 'Queue', 'captureQueues'), number('queueDepth', 'Depth'), number('droppedCount', 'Dropped'), text('instance', 'Instance')],
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
