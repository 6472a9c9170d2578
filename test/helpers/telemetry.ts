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
