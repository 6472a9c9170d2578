import { col, lookupOf, ReadFilter, ReadTable, SeriesGroup } from '../reads/read-table';
import { CAPTURE_QUEUE_NAMES } from './capture-queue-id';
import { ARCHIVER_STAGE_NAMES, CASE_CREATION_STAGE_NAMES } from './telemetry.types';

/**
 * The nine telemetry reads (service.md 4.3 and contract 10) as descriptions for the one read engine.
 * All are landlord only; dates bound CreatedDate except for ModelInvokeWarning (OccurredDate).
 */
const LANDLORD = { kind: 'landlord' } as const;
const stageFilter: ReadFilter = { param: 'stageId', sql: 't."StageId"', type: 'integer' };
const modelFilter: ReadFilter = { param: 'entityAnalysisModelGuid', sql: 't."EntityAnalysisModelGuid"', type: 'uuid' };
const COUNTER_STATISTICS = ['totalMicroseconds', 'minMicroseconds', 'maxMicroseconds', 'invokeCount'];

/** What a series (contract 17) may be grouped by: the code and identity columns of each table. */
const byStage = (names: Record<number, string>): SeriesGroup => ({ param: 'stageId', sql: 't."StageId"', names });
const byModel = (named: boolean): SeriesGroup => ({
  param: 'entityAnalysisModelGuid',
  sql: 't."EntityAnalysisModelGuid"',
  ...(named ? { nameSql: 't."EntityAnalysisModelName"' } : {}),
});
const byQueue: SeriesGroup = { param: 'queueId', sql: 't."QueueId"', names: CAPTURE_QUEUE_NAMES };
const byInstance: SeriesGroup = { param: 'instance', sql: 't."Instance"' };
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
