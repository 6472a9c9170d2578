/**
 * The six capture queues (service.md 4.3, 6): the QueueId of CaptureQueueHealth. Defined here once;
 * their display names, the code table served to the pages and the telemetry table description read it.
 */
export enum CaptureQueueId {
  ModelInvokeWarning = 1,
  CaseCreationWarning = 2,
  ArchiverWarning = 3,
  RedisSentinelEvent = 4,
  RedisConnectionEvent = 5,
  OpenTelemetryMetric = 6,
}

/** Each queue's name is the name of the table it fills, which is also its member name above. */
export const CAPTURE_QUEUE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(CaptureQueueId)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number')
    .map(([name, id]) => [id, name]),
);
