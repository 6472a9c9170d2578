import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes behind the grid reads (reads/): every read filters a date window, counts it, takes the
 * newest 100000 rows for the statistics and pages in date order, so each table gets a descending
 * (date, Id) btree. Where the table is large and narrow (warnings, queue health) the index also
 * carries the filter and statistics columns so the count and the statistics are index-only scans.
 * The case-insensitive substring searches use pg_trgm GIN indexes (the extension is created by the
 * initial migration; the embedded PGlite loads it too).
 */
export class ReadIndexes1763904000000 implements MigrationInterface {
  name = 'ReadIndexes1763904000000';

  async up(q: QueryRunner): Promise<void> {
    const statements = [
      // Audit trails already have (CreatedDate DESC, Id DESC); add their search columns.
      ...['CreatedUser', 'RemoteIp', 'UserAgent', 'FailureMessage'].map(
        (c) => `CREATE INDEX "IX_UserLogin_${c}_Trgm" ON "UserLogin" USING gin ("${c}" gin_trgm_ops)`,
      ),
      ...['CreatedUser', 'CutByUser', 'RemoteIp', 'UserAgent', 'Message'].map(
        (c) => `CREATE INDEX "IX_UserLogout_${c}_Trgm" ON "UserLogout" USING gin ("${c}" gin_trgm_ops)`,
      ),
      `CREATE INDEX "IX_ArchiverStagePerformanceCounter_CreatedDate" ON "ArchiverStagePerformanceCounter"
         ("CreatedDate" DESC, "Id" DESC) INCLUDE ("StageId", "EntityAnalysisModelGuid", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount")`,
      `CREATE INDEX "IX_CaseCreationStagePerformanceCounter_CreatedDate" ON "CaseCreationStagePerformanceCounter"
         ("CreatedDate" DESC, "Id" DESC) INCLUDE ("StageId", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount")`,
      `CREATE INDEX "IX_ArchiverWarning_CreatedDate" ON "ArchiverWarning"
         ("CreatedDate" DESC, "Id" DESC) INCLUDE ("StageId", "DurationMicroseconds")`,
      `CREATE INDEX "IX_CaseCreationWarning_CreatedDate" ON "CaseCreationWarning"
         ("CreatedDate" DESC, "Id" DESC) INCLUDE ("StageId", "DurationMicroseconds")`,
      `CREATE INDEX "IX_CaseCreationWarning_CaseKeyValue_Trgm" ON "CaseCreationWarning" USING gin ("CaseKeyValue" gin_trgm_ops)`,
      `CREATE INDEX "IX_ModelInvokeWarning_OccurredDate" ON "ModelInvokeWarning"
         ("OccurredDate" DESC, "Id" DESC) INCLUDE ("ElapsedMicroseconds", "SinceLastEntryMicroseconds")`,
      `CREATE INDEX "IX_ModelInvokeWarning_Model_OccurredDate" ON "ModelInvokeWarning" ("EntityAnalysisModelGuid", "OccurredDate" DESC)`,
      `CREATE INDEX "IX_ModelInvokeWarning_ModelName_Trgm" ON "ModelInvokeWarning" USING gin ("EntityAnalysisModelName" gin_trgm_ops)`,
      `CREATE INDEX "IX_ModelInvokeWarning_Message_Trgm" ON "ModelInvokeWarning" USING gin ("Message" gin_trgm_ops)`,
      `CREATE INDEX "IX_CaptureQueueHealth_CreatedDate" ON "CaptureQueueHealth"
         ("CreatedDate" DESC, "Id" DESC) INCLUDE ("QueueId", "QueueDepth", "DroppedCount")`,
      `CREATE INDEX "IX_RedisConnectionEvent_CreatedDate" ON "RedisConnectionEvent" ("CreatedDate" DESC, "Id" DESC)`,
      `CREATE INDEX "IX_RedisSentinelEvent_CreatedDate" ON "RedisSentinelEvent" ("CreatedDate" DESC, "Id" DESC)`,
      `CREATE INDEX "IX_OpenTelemetryMetric_CreatedDate" ON "OpenTelemetryMetric" ("CreatedDate" DESC, "Id" DESC)`,
      `CREATE INDEX "IX_OpenTelemetryMetric_Name_Trgm" ON "OpenTelemetryMetric" USING gin ("Name" gin_trgm_ops)`,
    ];
    for (const sql of statements) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    const names = [
      ...['CreatedUser', 'RemoteIp', 'UserAgent', 'FailureMessage'].map((c) => `IX_UserLogin_${c}_Trgm`),
      ...['CreatedUser', 'CutByUser', 'RemoteIp', 'UserAgent', 'Message'].map((c) => `IX_UserLogout_${c}_Trgm`),
      'IX_ArchiverStagePerformanceCounter_CreatedDate',
      'IX_CaseCreationStagePerformanceCounter_CreatedDate',
      'IX_ArchiverWarning_CreatedDate',
      'IX_CaseCreationWarning_CreatedDate',
      'IX_CaseCreationWarning_CaseKeyValue_Trgm',
      'IX_ModelInvokeWarning_OccurredDate',
      'IX_ModelInvokeWarning_Model_OccurredDate',
      'IX_ModelInvokeWarning_ModelName_Trgm',
      'IX_ModelInvokeWarning_Message_Trgm',
      'IX_CaptureQueueHealth_CreatedDate',
      'IX_RedisConnectionEvent_CreatedDate',
      'IX_RedisSentinelEvent_CreatedDate',
      'IX_OpenTelemetryMetric_CreatedDate',
      'IX_OpenTelemetryMetric_Name_Trgm',
    ];
    for (const name of names) await q.query(`DROP INDEX IF EXISTS "${name}"`);
  }
}
