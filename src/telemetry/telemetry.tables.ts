import { BoundedQueue, METRIC_SERIES_CAPACITY, MetricSeriesQueue, QUEUE_CAPACITY, StageCounters } from '../capture-queues/bounded-queue';
import { CAPTURE_TEXT, captureDate, captureGuid, captureText, isCode, microseconds } from '../capture-queues/capture-entry.checks';
import { CaptureQueueHealth } from '../capture-queues/capture-queue-health.entity';
import { codeColumn, codeFilter, dateColumn, GridFilter, guidColumn, microsColumn, numberColumn, textColumn } from '../reads/grid-page';
import { col, lookupOf, ReadFilter, ReadTable, SeriesGroup } from '../reads/read-table';
import { OpenTelemetryMetric } from './open-telemetry-metric.entity';
import { RedisConnectionEvent, RedisSentinelEvent } from './redis-event.entities';
import { ArchiverStagePerformanceCounter, CaseCreationStagePerformanceCounter } from './stage-performance-counter.entities';
import { ARCHIVER_STAGE_NAMES, ArchiverStage, CASE_CREATION_STAGE_NAMES, CaseCreationStage } from './telemetry.types';
import { TelemetryTable, telemetryTable } from './telemetry-table';
import { ArchiverWarning, CaseCreationWarning, ModelInvokeWarning } from './warning.entities';

/**
 * The nine telemetry reads (service.md 4.3 and contract 10) as descriptions for the one read engine.
 * All are landlord only; dates bound CreatedDate except for ModelInvokeWarning (OccurredDate).
 */
const LANDLORD = { kind: 'landlord' } as const;
const stageFilter: ReadFilter = { param: 'stageId', sql: 't."StageId"', type: 'integer' };
const modelFilter: ReadFilter = { param: 'entityAnalysisModelGuid', sql: 't."EntityAnalysisModelGuid"', type: 'uuid' };
const COUNTER_STATISTICS = ['totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount'];

/** What a series (contract 17) may be grouped by: the code and identity columns of each table. */
const byStage = (names: Record<number, string>): SeriesGroup => ({ param: 'stageId', sql: 't."StageId"', names, label: 'Stage' });
const byModel = (named: boolean): SeriesGroup => ({
  param: 'entityAnalysisModelGuid',
  sql: 't."EntityAnalysisModelGuid"',
  ...(named ? { nameSql: 't."EntityAnalysisModelName"' } : {}),
  label: 'Model',
});
const byInstance: SeriesGroup = { param: 'instance', sql: 't."Instance"', label: 'Instance' };
const COUNTER_INVOCATIONS = { count: 'InvokeCount', totalMicroseconds: 'TotalMicroseconds' };

export const ARCHIVER_STAGE_COUNTER_TABLE: ReadTable = {
  table: 'ArchiverStagePerformanceCounter',
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('EntityAnalysisModelGuid'),
    col('EntityAnalysisModelName'),
    col('StageId'),
    lookupOf('stageName', 'StageId', ARCHIVER_STAGE_NAMES),
    col('TotalMicroseconds'),
    col('MinMicroseconds'),
    col('MaxMicroseconds'),
    col('InvokeCount'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [stageFilter, modelFilter],
  // As ModelInvokeWarning: a case-insensitive substring of the model's name.
  searchColumns: ['t."EntityAnalysisModelName"'],
  statistics: COUNTER_STATISTICS,
  access: LANDLORD,
  series: { groups: [byStage(ARCHIVER_STAGE_NAMES), byModel(true), byInstance], invocations: COUNTER_INVOCATIONS },
};

export const ARCHIVER_WARNING_TABLE: ReadTable = {
  table: 'ArchiverWarning',
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('OccurredDate', 'date'),
    col('EntityAnalysisModelGuid'),
    col('EntityAnalysisModelName'),
    col('EntityAnalysisModelInstanceEntryGuid'),
    col('StageId'),
    lookupOf('stageName', 'StageId', ARCHIVER_STAGE_NAMES),
    col('DurationMicroseconds'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [stageFilter, modelFilter],
  searchColumns: [],
  statistics: ['durationMicroseconds'],
  access: LANDLORD,
  series: {
    groups: [byStage(ARCHIVER_STAGE_NAMES), byModel(true), byInstance],
    // The densest table (issue 21: 700,000 rows in an hour): whole minutes are counted and bucketed here.
    rollup: {
      table: 'ArchiverWarningMinute',
      keys: ['StageId', 'EntityAnalysisModelGuid', 'Instance'],
      values: ['DurationMicroseconds'],
      name: 'EntityAnalysisModelName',
    },
  },
};

export const CASE_CREATION_STAGE_COUNTER_TABLE: ReadTable = {
  table: 'CaseCreationStagePerformanceCounter',
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('StageId'),
    lookupOf('stageName', 'StageId', CASE_CREATION_STAGE_NAMES),
    col('TotalMicroseconds'),
    col('MinMicroseconds'),
    col('MaxMicroseconds'),
    col('InvokeCount'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [stageFilter],
  searchColumns: [],
  statistics: COUNTER_STATISTICS,
  access: LANDLORD,
  series: { groups: [byStage(CASE_CREATION_STAGE_NAMES), byInstance], invocations: COUNTER_INVOCATIONS },
};

export const CASE_CREATION_WARNING_TABLE: ReadTable = {
  table: 'CaseCreationWarning',
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('OccurredDate', 'date'),
    col('CaseWorkflowGuid'),
    col('CaseWorkflowName'),
    col('CaseKey'),
    col('CaseKeyValue'),
    col('StageId'),
    lookupOf('stageName', 'StageId', CASE_CREATION_STAGE_NAMES),
    col('Destination'),
    col('DurationMicroseconds'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [stageFilter],
  searchColumns: ['t."CaseKeyValue"'],
  statistics: ['durationMicroseconds'],
  access: LANDLORD,
  series: { groups: [byStage(CASE_CREATION_STAGE_NAMES), byInstance] },
};

export const MODEL_INVOKE_WARNING_TABLE: ReadTable = {
  table: 'ModelInvokeWarning',
  dateColumn: 'OccurredDate',
  columns: [
    col('Id'),
    col('OccurredDate', 'date'),
    col('EntityAnalysisModelGuid'),
    col('EntityAnalysisModelName'),
    col('EntityAnalysisModelInstanceEntryGuid'),
    col('Message'),
    col('ElapsedMicroseconds'),
    col('SinceLastEntryMicroseconds'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [modelFilter],
  searchColumns: ['t."EntityAnalysisModelName"', 't."Message"'],
  statistics: ['elapsedMicroseconds', 'sinceLastEntryMicroseconds'],
  access: LANDLORD,
  series: { groups: [byModel(true), byInstance] },
};

const redisEventTable = (table: string): ReadTable => ({
  table,
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('OccurredDate', 'date'),
    col('EventName'),
    col('Endpoint'),
    col('Message'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [],
  searchColumns: ['t."EventName"', 't."Endpoint"', 't."Message"'],
  statistics: [],
  access: LANDLORD,
  series: { groups: [byInstance] },
});

export const REDIS_CONNECTION_EVENT_TABLE = redisEventTable('RedisConnectionEvent');
export const REDIS_SENTINEL_EVENT_TABLE = redisEventTable('RedisSentinelEvent');

export const OPEN_TELEMETRY_METRIC_TABLE: ReadTable = {
  table: 'OpenTelemetryMetric',
  dateColumn: 'CreatedDate',
  columns: [col('Id'), col('Name'), col('Tags'), col('Count'), col('Sum'), col('Min'), col('Max'), col('CreatedDate', 'date'), col('Instance')],
  filters: [],
  searchColumns: ['t."Name"'],
  statistics: ['count', 'sum', 'min', 'max'],
  access: LANDLORD,
  series: { groups: [byInstance] },
};

/*
 * What the pipelines push to each queue (service.md 6), and the check each entry passes as it is
 * enqueued (contract 13): a cleaned entry, or null for one that could never be written.
 */

export interface ArchiverWarningEntry {
  occurredDate: Date;
  modelGuid: string;
  modelName: string | null;
  entryGuid: string | null;
  stageId: ArchiverStage;
  durationMicroseconds: number;
}

export interface CaseCreationWarningEntry {
  occurredDate: Date;
  caseWorkflowGuid: string | null;
  caseWorkflowName: string | null;
  caseKey: string | null;
  caseKeyValue: string | null;
  stageId: CaseCreationStage;
  destination: string | null;
  durationMicroseconds: number;
}

export interface ModelInvokeWarningEntry {
  occurredDate: Date;
  modelGuid: string;
  modelName: string | null;
  entryGuid: string | null;
  message: string | null;
  elapsedMicroseconds: number;
  sinceLastEntryMicroseconds: number;
}

export interface RedisEventEntry {
  occurredDate: Date;
  eventName: string;
  endpoint: string | null;
  message: string | null;
}

export function checkArchiverWarning(e: ArchiverWarningEntry): ArchiverWarningEntry | null {
  const occurredDate = captureDate(e.occurredDate);
  const modelGuid = captureGuid(e.modelGuid);
  const entryGuid = captureGuid(e.entryGuid);
  const durationMicroseconds = microseconds(e.durationMicroseconds);
  if (!occurredDate || !modelGuid || entryGuid === undefined || durationMicroseconds === undefined || !isCode(ARCHIVER_STAGE_NAMES, e.stageId)) return null;
  return { occurredDate, modelGuid, modelName: captureText(e.modelName, CAPTURE_TEXT.name), entryGuid, stageId: e.stageId, durationMicroseconds };
}

export function checkCaseCreationWarning(e: CaseCreationWarningEntry): CaseCreationWarningEntry | null {
  const occurredDate = captureDate(e.occurredDate);
  const caseWorkflowGuid = captureGuid(e.caseWorkflowGuid);
  const durationMicroseconds = microseconds(e.durationMicroseconds);
  if (!occurredDate || caseWorkflowGuid === undefined || durationMicroseconds === undefined || !isCode(CASE_CREATION_STAGE_NAMES, e.stageId)) return null;
  return {
    occurredDate,
    caseWorkflowGuid,
    caseWorkflowName: captureText(e.caseWorkflowName, CAPTURE_TEXT.name),
    caseKey: captureText(e.caseKey, CAPTURE_TEXT.name),
    caseKeyValue: captureText(e.caseKeyValue, CAPTURE_TEXT.key),
    stageId: e.stageId,
    destination: captureText(e.destination, CAPTURE_TEXT.url),
    durationMicroseconds,
  };
}

export function checkModelInvokeWarning(e: ModelInvokeWarningEntry): ModelInvokeWarningEntry | null {
  const occurredDate = captureDate(e.occurredDate);
  const modelGuid = captureGuid(e.modelGuid);
  const entryGuid = captureGuid(e.entryGuid);
  const elapsedMicroseconds = microseconds(e.elapsedMicroseconds);
  const sinceLastEntryMicroseconds = microseconds(e.sinceLastEntryMicroseconds);
  if (!occurredDate || !modelGuid || entryGuid === undefined || elapsedMicroseconds === undefined || sinceLastEntryMicroseconds === undefined) return null;
  return {
    occurredDate,
    modelGuid,
    modelName: captureText(e.modelName, CAPTURE_TEXT.name),
    entryGuid,
    message: captureText(e.message, CAPTURE_TEXT.message),
    elapsedMicroseconds,
    sinceLastEntryMicroseconds,
  };
}

export function checkRedisEvent(e: RedisEventEntry): RedisEventEntry | null {
  const occurredDate = captureDate(e.occurredDate);
  const eventName = captureText(e.eventName, CAPTURE_TEXT.name);
  if (!occurredDate || !eventName) return null;
  return { occurredDate, eventName, endpoint: captureText(e.endpoint, CAPTURE_TEXT.name), message: captureText(e.message, CAPTURE_TEXT.message) };
}

/*
 * The pages' words for these tables (grid-page.ts): filters, column kinds and the chart's measures.
 */

/** ISO text is much cheaper for the driver to serialise than Date objects (20000 per flush). */
const iso = (date: Date) => date.toISOString();

const stageGridFilter = (codes: string): GridFilter => codeFilter('stageId', 'Stage', 'All stages', codes);
/** Models are named from the server (the Series route, grouped by model): no list of them lives in a page. */
const modelGridFilter: GridFilter = { param: 'entityAnalysisModelGuid', label: 'Model', all: 'All models', lookup: 'models' };
const counterColumns = [microsColumn('totalMicroseconds', 'Total'), microsColumn('minMicroseconds', 'Min'), microsColumn('maxMicroseconds', 'Max'), numberColumn('invokeCount', 'Invocations')];
const timeMeasure = (column: string, label: string) => ({ label, column, unit: 'µs' as const, mean: 'mean', max: 'max' });
const countMeasure = (column: string, label: string) => ({ label, column, mean: 'mean', max: 'max' });
/**
 * The stage counters: the time an invocation takes, as the mean per invocation (TotalMicroseconds over
 * InvokeCount, the route's meanMicroseconds) beside the slowest one in the bucket (max of MaxMicroseconds).
 */
const counterMeasures = [
  { label: 'Time per invocation', column: 'maxMicroseconds', unit: 'µs' as const, mean: 'meanMicroseconds', max: 'max', meanLabel: 'mean per invocation', maxLabel: 'slowest invocation' },
  { label: 'Invocations', column: 'invokeCount', mean: 'invocations', max: null, meanLabel: 'invocations', whole: true },
];

/** A stage counter's row columns, from one counter of the minute. */
const counterValues = {
  totalMicroseconds: ([, c]: [string, { totalMicroseconds: number }]) => Math.round(c.totalMicroseconds),
  minMicroseconds: ([, c]: [string, { minMicroseconds: number }]) => Math.round(c.minMicroseconds),
  maxMicroseconds: ([, c]: [string, { maxMicroseconds: number }]) => Math.round(c.maxMicroseconds),
  invokeCount: ([, c]: [string, { invokeCount: number }]) => c.invokeCount,
};

/*
 * The tables, one description each (decision 0028). QueueIds are the capture queues' (service.md 4.3).
 */

export const ARCHIVER_STAGE_COUNTER = telemetryTable({
  entity: ArchiverStagePerformanceCounter,
  read: ARCHIVER_STAGE_COUNTER_TABLE,
  summary: 'Archiver stage counters per model, about one row per stage per minute.',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 1,
    title: 'Archiver Stage Performance Counter',
    grid: {
      search: 'Model name',
      filters: [stageGridFilter('archiverStages'), modelGridFilter],
      // The model by name (captured with the counter, contract 17), its GUID shortened under it.
      columns: [
        dateColumn('createdDate', 'Date'),
        { field: 'entityAnalysisModelName', label: 'Model', type: 'model' },
        codeColumn('stageName', 'Stage', 'archiverStages'),
        ...counterColumns,
        textColumn('instance', 'Instance'),
      ],
      chart: { measures: counterMeasures },
    },
  },
  capture: {
    queueId: null,
    /** Keyed by model and stage; the model's name travels with its key (the first name seen in the minute). */
    queue: () => new StageCounters<{ modelGuid: string; modelName: string | null; stageId: ArchiverStage }>(),
    columns: {
      entityAnalysisModelGuid: ([, c]) => c.key.modelGuid,
      entityAnalysisModelName: ([, c]) => c.key.modelName,
      stageId: ([, c]) => c.key.stageId,
      ...counterValues,
    },
  },
});

export const ARCHIVER_WARNING = telemetryTable({
  entity: ArchiverWarning,
  read: ARCHIVER_WARNING_TABLE,
  summary: 'Archiver stage invocations slower than ArchiverWarnThresholdMilliseconds.',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 2,
    title: 'Archiver Warning',
    grid: {
      filters: [stageGridFilter('archiverStages'), modelGridFilter],
      columns: [
        dateColumn('createdDate', 'Date'),
        dateColumn('occurredDate', 'Occurred'),
        textColumn('entityAnalysisModelName', 'Model'),
        guidColumn('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
        codeColumn('stageName', 'Stage', 'archiverStages'),
        microsColumn('durationMicroseconds', 'Duration'),
        textColumn('instance', 'Instance'),
      ],
      chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')] },
    },
  },
  capture: {
    queueId: 3,
    queue: () => new BoundedQueue<ArchiverWarningEntry>(QUEUE_CAPACITY, checkArchiverWarning),
    columns: {
      occurredDate: (e) => iso(e.occurredDate),
      entityAnalysisModelGuid: (e) => e.modelGuid,
      entityAnalysisModelName: (e) => e.modelName,
      entityAnalysisModelInstanceEntryGuid: (e) => e.entryGuid,
      stageId: (e) => e.stageId,
      durationMicroseconds: (e) => e.durationMicroseconds,
    },
  },
});

export const CASE_CREATION_STAGE_COUNTER = telemetryTable({
  entity: CaseCreationStagePerformanceCounter,
  read: CASE_CREATION_STAGE_COUNTER_TABLE,
  summary: 'Case creation stage counters (global), about one row per stage per minute.',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 3,
    title: 'Case Creation Stage Performance Counter',
    grid: {
      filters: [stageGridFilter('caseCreationStages')],
      columns: [dateColumn('createdDate', 'Date'), codeColumn('stageName', 'Stage', 'caseCreationStages'), ...counterColumns, textColumn('instance', 'Instance')],
      chart: { measures: counterMeasures },
    },
  },
  capture: {
    queueId: null,
    queue: () => new StageCounters<{ stageId: CaseCreationStage }>(),
    columns: { stageId: ([, c]) => c.key.stageId, ...counterValues },
  },
});

export const CASE_CREATION_WARNING = telemetryTable({
  entity: CaseCreationWarning,
  read: CASE_CREATION_WARNING_TABLE,
  summary: 'Case creation stage invocations slower than CaseCreationWarnThresholdMilliseconds.',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 4,
    title: 'Case Creation Warning',
    grid: {
      search: 'Case key value',
      filters: [stageGridFilter('caseCreationStages')],
      columns: [
        dateColumn('createdDate', 'Date'),
        dateColumn('occurredDate', 'Occurred', { optional: true }),
        textColumn('caseWorkflowName', 'Case workflow'),
        // The key's name sits under its value: one column instead of two.
        textColumn('caseKeyValue', 'Case key value', { sub: 'caseKey' }),
        codeColumn('stageName', 'Stage', 'caseCreationStages'),
        microsColumn('durationMicroseconds', 'Duration'),
        textColumn('destination', 'Destination', { wide: true }),
        textColumn('instance', 'Instance'),
      ],
      chart: { measures: [timeMeasure('durationMicroseconds', 'Duration')] },
    },
  },
  capture: {
    queueId: 2,
    queue: () => new BoundedQueue<CaseCreationWarningEntry>(QUEUE_CAPACITY, checkCaseCreationWarning),
    columns: {
      occurredDate: (e) => iso(e.occurredDate),
      caseWorkflowGuid: (e) => e.caseWorkflowGuid,
      caseWorkflowName: (e) => e.caseWorkflowName,
      caseKey: (e) => e.caseKey,
      caseKeyValue: (e) => e.caseKeyValue,
      stageId: (e) => e.stageId,
      destination: (e) => e.destination,
      durationMicroseconds: (e) => e.durationMicroseconds,
    },
  },
});

export const MODEL_INVOKE_WARNING = telemetryTable({
  entity: ModelInvokeWarning,
  read: MODEL_INVOKE_WARNING_TABLE,
  summary: "Trace points slower than the model's warn threshold; from/to bound OccurredDate.",
  retention: 'day',
  page: {
    section: 'Logs',
    place: 1,
    title: 'Model Invoke Warning',
    grid: {
      search: 'Model name or message',
      dateLabel: 'occurred',
      filters: [modelGridFilter],
      columns: [
        dateColumn('occurredDate', 'Occurred'),
        textColumn('entityAnalysisModelName', 'Model'),
        guidColumn('entityAnalysisModelInstanceEntryGuid', 'Invocation'),
        textColumn('message', 'Message', { wide: true }),
        microsColumn('elapsedMicroseconds', 'Elapsed'),
        microsColumn('sinceLastEntryMicroseconds', 'Since last entry'),
        textColumn('instance', 'Instance'),
      ],
      chart: { measures: [timeMeasure('elapsedMicroseconds', 'Elapsed'), timeMeasure('sinceLastEntryMicroseconds', 'Since last entry')] },
    },
  },
  capture: {
    queueId: 1,
    queue: () => new BoundedQueue<ModelInvokeWarningEntry>(QUEUE_CAPACITY, checkModelInvokeWarning),
    columns: {
      occurredDate: (e) => iso(e.occurredDate),
      entityAnalysisModelGuid: (e) => e.modelGuid,
      entityAnalysisModelName: (e) => e.modelName,
      entityAnalysisModelInstanceEntryGuid: (e) => e.entryGuid,
      message: (e) => e.message,
      elapsedMicroseconds: (e) => e.elapsedMicroseconds,
      sinceLastEntryMicroseconds: (e) => e.sinceLastEntryMicroseconds,
    },
  },
});

/** The two Redis event logs: what the client and the Sentinels saw happen to the connections (contract 10). */
const redisEvents = <T extends RedisConnectionEvent | RedisSentinelEvent>(
  entity: new () => T,
  read: ReadTable,
  summary: string,
  place: number,
  title: string,
  queueId: number,
) =>
  telemetryTable({
    entity,
    read,
    summary,
    retention: 'day',
    page: {
      section: 'Logs',
      place,
      title,
      grid: {
        search: 'Event, endpoint or message',
        columns: [
          dateColumn('createdDate', 'Date'),
          dateColumn('occurredDate', 'Occurred', { optional: true }),
          textColumn('eventName', 'Event'),
          textColumn('endpoint', 'Endpoint'),
          textColumn('message', 'Message', { wide: true }),
          textColumn('instance', 'Instance'),
        ],
        // No statistics columns: the chart counts events.
        chart: { measures: [{ label: 'Events', column: null, mean: 'count', max: null, meanLabel: 'events', whole: true }] },
      },
    },
    capture: {
      queueId,
      queue: () => new BoundedQueue<RedisEventEntry>(QUEUE_CAPACITY, checkRedisEvent),
      columns: {
        occurredDate: (e) => iso(e.occurredDate),
        eventName: (e) => e.eventName,
        endpoint: (e) => e.endpoint,
        message: (e) => e.message,
      } as { [P in keyof T]?: (e: RedisEventEntry) => unknown },
    },
  });

export const REDIS_CONNECTION_EVENT = redisEvents(RedisConnectionEvent, REDIS_CONNECTION_EVENT_TABLE, 'Connection events of the Redis client.', 2, 'Redis Connection Event', 5);
export const REDIS_SENTINEL_EVENT = redisEvents(
  RedisSentinelEvent,
  REDIS_SENTINEL_EVENT_TABLE,
  'Events of the Redis Sentinels (a master down, a failover, the new master), as each node read them.',
  3,
  'Redis Sentinel Event',
  4,
);

export const OPEN_TELEMETRY_METRIC = telemetryTable({
  entity: OpenTelemetryMetric,
  read: OPEN_TELEMETRY_METRIC_TABLE,
  summary: 'Per-minute aggregates of every instrument series (name + tags).',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 6,
    title: 'OpenTelemetry Metric',
    grid: {
      search: 'Instrument name',
      // One row per instrument series (name + tags) per minute: what was recorded in that minute.
      columns: [
        dateColumn('createdDate', 'Date'),
        textColumn('name', 'Instrument'),
        { field: 'tags', label: 'Tags', type: 'tags' },
        numberColumn('count', 'Count'),
        numberColumn('sum', 'Sum'),
        numberColumn('min', 'Min'),
        numberColumn('max', 'Max'),
        textColumn('instance', 'Instance'),
      ],
      // Instruments of different units share the table: the chart counts recordings, and the grid's
      // search narrows to one instrument.
      chart: { measures: [countMeasure('count', 'Recordings per row'), countMeasure('sum', 'Sum'), countMeasure('max', 'Max')] },
    },
  },
  capture: {
    queueId: 6,
    queue: () => new MetricSeriesQueue(METRIC_SERIES_CAPACITY),
    columns: {
      name: ([, s]) => s.name,
      tags: ([, s]) => JSON.stringify(s.tags),
      count: ([, s]) => s.count,
      sum: ([, s]) => s.sum,
      min: ([, s]) => s.min,
      max: ([, s]) => s.max,
    },
  },
});

/** The queue-fed tables and the stage counters: what the capture flush writes, in the order it writes them. */
export const CAPTURED_TABLES: readonly TelemetryTable[] = [
  MODEL_INVOKE_WARNING,
  CASE_CREATION_WARNING,
  ARCHIVER_WARNING,
  REDIS_SENTINEL_EVENT,
  REDIS_CONNECTION_EVENT,
  OPEN_TELEMETRY_METRIC,
  ARCHIVER_STAGE_COUNTER,
  CASE_CREATION_STAGE_COUNTER,
] as TelemetryTable[];

/** Each capture queue's QueueId by its name, which is the name of the table it fills (the code table of the pages). */
export const CAPTURE_QUEUE_IDS: Readonly<Record<string, number>> = Object.fromEntries(
  CAPTURED_TABLES.filter((t) => t.capture?.queueId != null)
    .sort((a, b) => a.capture!.queueId! - b.capture!.queueId!)
    .map((t) => [t.read.table, t.capture!.queueId!]),
);

/** Each capture queue's name by its QueueId. */
export const CAPTURE_QUEUE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(CAPTURE_QUEUE_IDS).map(([name, id]) => [id, name]));

const byQueue: SeriesGroup = { param: 'queueId', sql: 't."QueueId"', names: CAPTURE_QUEUE_NAMES, label: 'Queue' };

export const CAPTURE_QUEUE_HEALTH_TABLE: ReadTable = {
  table: 'CaptureQueueHealth',
  dateColumn: 'CreatedDate',
  columns: [
    col('Id'),
    col('QueueId'),
    lookupOf('queueName', 'QueueId', CAPTURE_QUEUE_NAMES),
    col('QueueDepth'),
    col('DroppedCount'),
    col('CreatedDate', 'date'),
    col('Instance'),
  ],
  filters: [{ param: 'queueId', sql: 't."QueueId"', type: 'integer' }],
  searchColumns: [],
  statistics: ['queueDepth', 'droppedCount'],
  access: LANDLORD,
  series: { groups: [byQueue, byInstance] },
};


export const CAPTURE_QUEUE_HEALTH = telemetryTable({
  entity: CaptureQueueHealth,
  read: CAPTURE_QUEUE_HEALTH_TABLE,
  summary: 'One row per capture queue per minute: depth at flush and entries dropped.',
  retention: 'day',
  page: {
    section: 'Performance',
    place: 5,
    title: 'Capture Queue Health',
    grid: {
      filters: [codeFilter('queueId', 'Queue', 'All queues', 'captureQueues')],
      columns: [
        dateColumn('createdDate', 'Date'),
        codeColumn('queueName', 'Queue', 'captureQueues'),
        numberColumn('queueDepth', 'Depth'),
        numberColumn('droppedCount', 'Dropped'),
        textColumn('instance', 'Instance'),
      ],
      chart: { measures: [countMeasure('queueDepth', 'Depth'), countMeasure('droppedCount', 'Dropped')] },
    },
  },
});

/** The nine telemetry tables of contract 10, in the order of their routes. */
export const TELEMETRY_TABLES: readonly TelemetryTable[] = [
  ARCHIVER_STAGE_COUNTER,
  ARCHIVER_WARNING,
  CASE_CREATION_STAGE_COUNTER,
  CASE_CREATION_WARNING,
  MODEL_INVOKE_WARNING,
  CAPTURE_QUEUE_HEALTH,
  REDIS_CONNECTION_EVENT,
  REDIS_SENTINEL_EVENT,
  OPEN_TELEMETRY_METRIC,
] as TelemetryTable[];
