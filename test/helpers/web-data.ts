import type { TestApp } from './app';

const MODEL = '7c1d2f5e-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
const OTHER_MODEL = '0b7e8a4c-93d2-4f61-a5b7-2c9d1e3f4a6b';

/**
 * Telemetry rows of the last hour as a busy platform writes them: stage counters with totals in the
 * hundreds of seconds (in microseconds, as stored) and invocation counts in the tens of millions,
 * warnings from milliseconds to minutes, and a Capture Queue Health that is all zeros (a healthy
 * platform) so its "no variation" state shows.
 */
export async function seedTelemetry(t: TestApp): Promise<void> {
  const now = t.clock.nowMs();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000);
  for (let i = 0; i < 24; i++) {
    const stage = (i % 4) + 1;
    await t.db.query(
      `INSERT INTO "ArchiverStagePerformanceCounter" ("EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount", "CreatedDate", "Instance")
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'node-1.bank.example')`,
      [
        i % 3 ? MODEL : OTHER_MODEL,
        i % 3 ? 'Card fraud scoring (retail)' : 'Anti money laundering',
        stage,
        133_971_466 + i * 9_876_543,
        12 + i,
        8_912_345 + i * 1_000,
        45_796_123 + i * 17_011,
        at(i * 2 + 1),
      ],
    );
    await t.db.query(
      `INSERT INTO "CaseCreationStagePerformanceCounter" ("StageId", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount", "CreatedDate", "Instance")
       VALUES ($1, $2, $3, $4, $5, $6, 'node-2.bank.example')`,
      [stage, 3_600_000_000 + i * 61_000_000, 250 + i, 95_000_000 + i, 1_234_567 + i * 333, at(i * 2 + 1)],
    );
  }
  for (let i = 1; i <= 30; i++) {
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       VALUES ($1, $2, $3, $4, $5, $6, $1, 'node-1.bank.example')`,
      [at(i), MODEL, 'Card fraud scoring (retail)', i % 5 ? `9f8e7d6c-5b4a-4392-8170-${String(i).padStart(12, '0')}` : null, (i % 4) + 1, 10_000_000 + i * i * 170_000],
    );
    await t.db.query(
      `INSERT INTO "CaseCreationWarning" ("OccurredDate", "CaseWorkflowGuid", "CaseWorkflowName", "CaseKey", "CaseKeyValue", "StageId", "Destination", "DurationMicroseconds", "CreatedDate", "Instance")
       VALUES ($1, $2, 'Suspicious transfer review', 'AccountId', $3, $4, $5, $6, $1, 'node-2.bank.example')`,
      [
        at(i),
        OTHER_MODEL,
        `GB29NWBK6016133192${String(i).padStart(4, '0')}`,
        (i % 4) + 1,
        i % 4 === 3 ? 'https://hooks.bank.example/case-management/v2/notifications/suspicious-transfer?tenant=north' : null,
        10_500_000 + i * 800_000,
      ],
    );
    await t.db.query(
      `INSERT INTO "ModelInvokeWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid", "Message", "ElapsedMicroseconds", "SinceLastEntryMicroseconds", "CreatedDate", "Instance")
       VALUES ($1, $2, 'Card fraud scoring (retail)', $3, $4, $5, $6, $1, 'node-1.bank.example')`,
      [at(i), MODEL, `5a4b3c2d-1e0f-4a9b-8c7d-${String(i).padStart(12, '0')}`, `Trace point ${i}: abstraction rule "Velocity over 24 hours" evaluated after a slow cache refresh`, 2_500_000 + i * 90_000, 1_050_000 + i * 40_000],
    );
  }
  for (let minute = 1; minute <= 10; minute++) {
    for (let queue = 1; queue <= 6; queue++) {
      await t.db.query(`INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance") VALUES ($1, 0, 0, $2, 'node-1.bank.example')`, [queue, at(minute)]);
    }
  }
}
