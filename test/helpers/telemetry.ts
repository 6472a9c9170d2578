import { CaptureFlusher } from '../../src/capture-queues/capture-flusher.service';
import { TestApp } from './app';

/**
 * Flushes what the capture queues hold, then empties every table the flush writes, so a test counts
 * only the rows it caused.
 */
export async function emptyCaptureTables(t: TestApp): Promise<void> {
  await t.app.get(CaptureFlusher).flush();
  await t.db.query(
    `TRUNCATE "CaptureQueueHealth", "ArchiverWarning", "CaseCreationWarning", "ModelInvokeWarning", "ArchiverStagePerformanceCounter",
              "CaseCreationStagePerformanceCounter", "OpenTelemetryMetric", "RedisConnectionEvent", "RedisSentinelEvent"`,
  );
}

/**
 * The nine telemetry tables of contract 10, each with its grid read and its series, written here from
 * the contract rather than imported from src so that a table the server drops makes a test fail.
 */
export const CONTRACT_TELEMETRY_TABLES = [
  'ArchiverStagePerformanceCounter',
  'ArchiverWarning',
  'CaseCreationStagePerformanceCounter',
  'CaseCreationWarning',
  'ModelInvokeWarning',
  'CaptureQueueHealth',
  'RedisConnectionEvent',
  'RedisSentinelEvent',
  'OpenTelemetryMetric',
] as const;
