import { randomUUID } from 'node:crypto';
import { Bus } from '../src/bus/bus';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { CaptureQueues, QUEUE_CAPACITY } from '../src/telemetry/capture-queues.service';
import { PipelineTelemetry } from '../src/telemetry/pipeline-telemetry.service';
import { MAX_STAGES, OVERFLOW_STAGE, TelemetryMetrics } from '../src/telemetry/telemetry-metrics';
import { ArchiverStage, CaseCreationStage } from '../src/telemetry/telemetry.types';
import { startTestApp, TestApp } from './helpers/app';
import { signInAdministrator } from './helpers/users';
import { emptyCaptureTables } from './helpers/telemetry';

const caseContext = (value: string, destination: string | null = null) => ({
  caseWorkflowGuid: randomUUID(),
  caseWorkflowName: 'Fraud cases',
  caseKey: 'AccountId',
  caseKeyValue: value,
  destination,
});

describe('capture queues and their once-a-minute flush (service.md 6, contract 10)', () => {
  let t: TestApp;
  let flusher: CaptureFlusher;
  let telemetry: PipelineTelemetry;
  let queues: CaptureQueues;

  const health = () =>
    t.db.query<{ QueueId: number; QueueDepth: number; DroppedCount: string; Instance: string; CreatedDate: Date }>(
      `SELECT * FROM "CaptureQueueHealth" ORDER BY "Id"`,
    );

  beforeAll(async () => {
    t = await startTestApp({ env: { Instance: 'node-7', ArchiverWarnThresholdMilliseconds: '100', CaseCreationWarnThresholdMilliseconds: '50' } });
    flusher = t.app.get(CaptureFlusher);
    telemetry = t.app.get(PipelineTelemetry);
    queues = t.app.get(CaptureQueues);
  });
  afterAll(async () => t.close());
  beforeEach(async () => emptyCaptureTables(t));

  it('writes one health row per queue per flush, zeros included, and nothing else when idle', async () => {
    const report = await flusher.flush();
    expect(report.ok).toBe(true);
    const rows = await health();
    expect(rows.map((r) => [r.QueueId, r.QueueDepth, Number(r.DroppedCount)])).toEqual([
      [1, 0, 0],
      [2, 0, 0],
      [3, 0, 0],
      [4, 0, 0],
      [5, 0, 0],
      [6, 0, 0],
    ]);
    expect(rows.every((r) => r.Instance === 'node-7' && r.CreatedDate.getTime() === t.clock.nowMs())).toBe(true);
    expect(await t.db.query(`SELECT 1 FROM "ArchiverStagePerformanceCounter" UNION ALL SELECT 1 FROM "OpenTelemetryMetric"`)).toEqual([]);
  });

  it('accumulates archiver stages per model and stage, and warns past the threshold (entry null for BulkCopyArchiveBuffer)', async () => {
    const model = randomUUID();
    const entry = randomUUID();
    telemetry.recordArchiverStage(model, 'Card Fraud', ArchiverStage.BuildArchiveJson, 40_000, entry);
    telemetry.recordArchiverStage(model, 'Card Fraud', ArchiverStage.BuildArchiveJson, 150_000, entry);
    telemetry.recordArchiverStage(model, 'Card Fraud', ArchiverStage.BulkCopyArchiveBuffer, 250_000, entry);
    const report = await flusher.flush();
    expect(report.written).toMatchObject({ ArchiverWarning: 2, ArchiverStagePerformanceCounter: 2 });

    const counters = await t.db.query<any>(`SELECT * FROM "ArchiverStagePerformanceCounter" ORDER BY "StageId"`);
    expect(counters.map((c) => [c.EntityAnalysisModelGuid, c.StageId, Number(c.TotalMicroseconds), Number(c.MinMicroseconds), Number(c.MaxMicroseconds), Number(c.InvokeCount)])).toEqual([
      [model, 1, 190_000, 40_000, 150_000, 2],
      [model, 4, 250_000, 250_000, 250_000, 1],
    ]);
    const warnings = await t.db.query<any>(`SELECT * FROM "ArchiverWarning" ORDER BY "StageId"`);
    expect(warnings.map((w) => [w.StageId, Number(w.DurationMicroseconds), w.EntityAnalysisModelInstanceEntryGuid, w.EntityAnalysisModelName, w.Instance])).toEqual([
      [1, 150_000, entry, 'Card Fraud', 'node-7'],
      [4, 250_000, null, 'Card Fraud', 'node-7'],
    ]);
    // The health row saw the two warnings queued before the drain.
    expect((await health()).find((h) => h.QueueId === 3)!.QueueDepth).toBe(2);

    // The next interval had no activity: no counter rows, but the health rows still come.
    await flusher.flush();
    expect(await t.db.query(`SELECT * FROM "ArchiverStagePerformanceCounter"`)).toHaveLength(2);
    expect(await health()).toHaveLength(12);
  });

  it('records case creation stages globally, with the destination only for Notification and HttpEndpoint', async () => {
    telemetry.recordCaseCreationStage(CaseCreationStage.ExistingCasePriorityLookup, 60_000, caseContext('=cmd()', 'ignored'));
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 70_000, caseContext('A-1', 'https://hooks.example.com/x'));
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 10_000, caseContext('A-2', 'https://hooks.example.com/y'));
    await flusher.flush();
    const warnings = await t.db.query<any>(`SELECT * FROM "CaseCreationWarning" ORDER BY "StageId"`);
    expect(warnings.map((w) => [w.StageId, w.CaseKeyValue, w.Destination, Number(w.DurationMicroseconds)])).toEqual([
      [1, '=cmd()', null, 60_000],
      [4, 'A-1', 'https://hooks.example.com/x', 70_000],
    ]);
    const counters = await t.db.query<any>(`SELECT * FROM "CaseCreationStagePerformanceCounter" ORDER BY "StageId"`);
    expect(counters.map((c) => [c.StageId, Number(c.InvokeCount), Number(c.MinMicroseconds), Number(c.MaxMicroseconds)])).toEqual([
      [1, 1, 60_000, 60_000],
      [4, 2, 10_000, 70_000],
    ]);
  });

  it('enqueues a ModelInvokeWarning exactly when the logs warn counter counts, and aggregates every instrument by series', async () => {
    const model = randomUUID();
    const point = (message: string, since: number) =>
      telemetry.recordTracePoint({
        modelGuid: model,
        modelName: 'Card Fraud',
        entryGuid: randomUUID(),
        message,
        elapsedMicroseconds: since * 2,
        sinceLastEntryMicroseconds: since,
        warnThresholdMilliseconds: 5,
        stage: 'Abstraction',
      });
    point('fast', 1_000);
    point('slow', 6_000);
    point('slower', 9_000);
    await flusher.flush();
    const warnings = await t.db.query<any>(`SELECT * FROM "ModelInvokeWarning" ORDER BY "SinceLastEntryMicroseconds"`);
    expect(warnings.map((w) => [w.Message, Number(w.SinceLastEntryMicroseconds), Number(w.ElapsedMicroseconds)])).toEqual([
      ['slow', 6_000, 12_000],
      ['slower', 9_000, 18_000],
    ]);
    const metrics = await t.db.query<any>(`SELECT * FROM "OpenTelemetryMetric" ORDER BY "Name"`);
    const byName = Object.fromEntries(metrics.map((m) => [m.Name, m]));
    expect(byName['service.engine.logs.warn.count']).toMatchObject({ Tags: { stage: 'Abstraction' }, Sum: 2 });
    expect(Number(byName['service.engine.logs.warn.count'].Count)).toBe(warnings.length);
    expect(byName['service.engine.stage.duration']).toMatchObject({ Tags: { stage: 'Abstraction' }, Min: 1, Max: 9, Sum: 16 });
    expect(Number(byName['service.engine.stage.duration'].Count)).toBe(3);
  });

  it('drops and counts entries beyond the capacity, reports them once, and keeps enqueueing after the drain', async () => {
    const model = randomUUID();
    for (let i = 0; i < QUEUE_CAPACITY + 3; i++) telemetry.recordArchiverStage(model, 'M', ArchiverStage.RdbmsArchiveWrite, 200_000, null);
    expect(queues.archiverWarnings.depth).toBe(QUEUE_CAPACITY);
    await flusher.flush();
    const archiverHealth = (await health()).find((h) => h.QueueId === 3)!;
    expect([archiverHealth.QueueDepth, Number(archiverHealth.DroppedCount)]).toEqual([QUEUE_CAPACITY, 3]);
    expect((await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM "ArchiverWarning"`))[0].n).toBe(String(QUEUE_CAPACITY));
    const [counter] = await t.db.query<any>(`SELECT * FROM "ArchiverStagePerformanceCounter"`);
    expect(Number(counter.InvokeCount)).toBe(QUEUE_CAPACITY + 3);
    await flusher.flush();
    const second = (await health()).filter((h) => h.QueueId === 3).pop()!;
    expect([second.QueueDepth, Number(second.DroppedCount)]).toEqual([0, 0]);
  });

  it('captures the bus connection and Sentinel events into their queues', async () => {
    const bus = t.app.get(Bus);
    const occurredDate = t.clock.now();
    bus.events.emit('connection', { kind: 'connection', eventName: 'reconnecting', endpoint: '127.0.0.1:6379', message: 'ECONNRESET', occurredDate });
    bus.events.emit('connection', { kind: 'sentinel', eventName: '+switch-master', endpoint: '127.0.0.1:26379', message: null, occurredDate });
    await flusher.flush();
    expect(await t.db.query(`SELECT "EventName", "Endpoint", "Message" FROM "RedisConnectionEvent"`)).toEqual([
      { EventName: 'reconnecting', Endpoint: '127.0.0.1:6379', Message: 'ECONNRESET' },
    ]);
    expect(await t.db.query(`SELECT "EventName" FROM "RedisSentinelEvent"`)).toEqual([{ EventName: '+switch-master' }]);
  });

  it('a table that cannot be written keeps its entries for the next flush; the other tables and the health rows are written (contract 13)', async () => {
    const model = randomUUID();
    telemetry.recordArchiverStage(model, 'M', ArchiverStage.BuildArchiveJson, 500_000, randomUUID());
    telemetry.recordCaseCreationStage(CaseCreationStage.Notification, 90_000, caseContext('K-1', 'ops@example.com'));
    await t.db.query(`ALTER TABLE "ArchiverWarning" RENAME TO "ArchiverWarningAway"`);
    try {
      const failed = await flusher.flush();
      expect(failed.ok).toBe(false);
      expect(failed.setAside).toEqual({});
    } finally {
      await t.db.query(`ALTER TABLE "ArchiverWarningAway" RENAME TO "ArchiverWarning"`);
    }
    // Only the table in trouble waited: the timeline and the other tables did not.
    expect((await health()).map((h) => [h.QueueId, h.QueueDepth, Number(h.DroppedCount)])).toEqual([
      [1, 0, 0],
      [2, 1, 0],
      [3, 1, 0],
      [4, 0, 0],
      [5, 0, 0],
      [6, 4, 0],
    ]);
    expect(await t.db.query(`SELECT * FROM "CaseCreationWarning"`)).toHaveLength(1);
    expect(queues.archiverWarnings.depth).toBe(1);

    telemetry.recordArchiverStage(model, 'M', ArchiverStage.BuildArchiveJson, 300_000, randomUUID());
    const ok = await flusher.flush();
    expect(ok.ok).toBe(true);
    expect(await t.db.query(`SELECT * FROM "ArchiverWarning"`)).toHaveLength(2);
    expect(await t.db.query(`SELECT * FROM "CaseCreationWarning"`)).toHaveLength(1);
    // The stage counters did not wait for the archiver warnings: one row per flush.
    const counters = await t.db.query<any>(`SELECT * FROM "ArchiverStagePerformanceCounter" ORDER BY "Id"`);
    expect(counters.map((c) => [Number(c.InvokeCount), Number(c.TotalMicroseconds)])).toEqual([
      [1, 500_000],
      [1, 300_000],
    ]);
    expect((await health()).filter((h) => h.QueueId === 3).map((h) => h.QueueDepth)).toEqual([1, 2]);
  });

  it('checks entries as they are enqueued: control characters and NUL stripped, NaN durations and malformed GUIDs dropped and counted; the rest flushes (contract 13)', async () => {
    const model = randomUUID();
    const point = (overrides: Partial<Parameters<PipelineTelemetry['recordTracePoint']>[0]>) =>
      telemetry.recordTracePoint({
        modelGuid: model,
        modelName: 'Card Fraud',
        entryGuid: randomUUID(),
        message: 'slow',
        elapsedMicroseconds: 20_000,
        sinceLastEntryMicroseconds: 10_000,
        warnThresholdMilliseconds: 5,
        stage: 'Abstraction',
        ...overrides,
      });
    point({ message: 'nul\u0000in\u0007the\u009bmessage\ud800', stage: 'stage\u0000with nul' });
    point({ elapsedMicroseconds: Number.NaN });
    point({ modelGuid: 'not-a-guid' });
    point({ entryGuid: "'; DROP TABLE x; --" });
    telemetry.recordArchiverStage('zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz', 'M', ArchiverStage.RdbmsArchiveWrite, 900_000, null);
    telemetry.recordArchiverStage(model, 'M', ArchiverStage.RdbmsArchiveWrite, Number.POSITIVE_INFINITY, null);
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 70_000, { ...caseContext('A\u0000B'), caseWorkflowGuid: '{not a guid}' });
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 70_000, caseContext('C\u0000D', 'https://hooks\u0000.example.com'));
    t.app.get(TelemetryMetrics).invokeStageDuration.record(Number.NaN, 'Abstraction');

    const report = await flusher.flush();
    expect(report.ok).toBe(true);
    expect(report.setAside).toEqual({});
    const warnings = await t.db.query<any>(`SELECT "Message", "ElapsedMicroseconds" FROM "ModelInvokeWarning"`);
    expect(warnings).toEqual([{ Message: 'nulinthemessage\ufffd', ElapsedMicroseconds: '20000' }]);
    expect(await t.db.query(`SELECT "CaseKeyValue", "Destination" FROM "CaseCreationWarning"`)).toEqual([
      { CaseKeyValue: 'CD', Destination: 'https://hooks.example.com' },
    ]);
    expect(await t.db.query(`SELECT * FROM "ArchiverWarning"`)).toEqual([]);
    const tags = await t.db.query<{ Tags: Record<string, string> }>(`SELECT DISTINCT "Tags" FROM "OpenTelemetryMetric" ORDER BY 1`);
    expect(tags.map((r) => r.Tags.stage).sort()).toEqual(['Abstraction', 'HttpEndpoint', 'RdbmsArchiveWrite', 'stagewith nul']);
    // Dropped: three ModelInvokeWarnings (NaN, GUID, GUID), one CaseCreationWarning (GUID), two
    // ArchiverWarnings (GUID, infinite duration), two metric values (the NaN, the infinite duration).
    expect((await health()).map((h) => [h.QueueId, Number(h.DroppedCount)])).toEqual([
      [1, 3],
      [2, 1],
      [3, 2],
      [4, 0],
      [5, 0],
      [6, 2],
    ]);
  });

  it('an entry the database refuses alone is set aside, logged at ERROR and counted as dropped; every other entry is written (contract 13)', async () => {
    // A rule of the database this service does not know about refuses exactly one entry.
    await t.db.query(`ALTER TABLE "ArchiverWarning" ADD CONSTRAINT tm_test_refuse CHECK ("EntityAnalysisModelName" <> 'refused by the database')`);
    try {
      for (const name of ['first', 'refused by the database', 'third']) {
        telemetry.recordArchiverStage(randomUUID(), name, ArchiverStage.BuildArchiveJson, 500_000, randomUUID());
      }
      telemetry.recordCaseCreationStage(CaseCreationStage.Notification, 90_000, caseContext('K-2'));
      const report = await flusher.flush();
      expect(report.setAside).toEqual({ ArchiverWarning: 1 });
      expect(report.ok).toBe(true);
    } finally {
      await t.db.query(`ALTER TABLE "ArchiverWarning" DROP CONSTRAINT tm_test_refuse`);
    }
    expect((await t.db.query<any>(`SELECT "EntityAnalysisModelName" FROM "ArchiverWarning" ORDER BY "Id"`)).map((r) => r.EntityAnalysisModelName)).toEqual([
      'first',
      'third',
    ]);
    expect(await t.db.query(`SELECT * FROM "CaseCreationWarning"`)).toHaveLength(1);
    expect(await t.db.query(`SELECT * FROM "ArchiverStagePerformanceCounter"`)).toHaveLength(3);
    expect((await health()).find((h) => h.QueueId === 3)).toMatchObject({ QueueDepth: 3, DroppedCount: '1' });
    expect(queues.archiverWarnings.depth).toBe(0);
    // Set aside for good: the next flush does not meet it again, nor count it again.
    await flusher.flush();
    expect((await health()).filter((h) => h.QueueId === 3).map((h) => Number(h.DroppedCount))).toEqual([1, 0]);
  });

  it('bounds the per-stage tags of an instrument: further stages share one overflow series', async () => {
    const instrument = t.app.get(TelemetryMetrics).invokeStageDuration;
    for (let i = 0; i < MAX_STAGES + 50; i++) instrument.record(1, `stage-${i}`);
    await flusher.flush();
    const rows = await t.db.query<{ Tags: { stage: string }; Count: string }>(
      `SELECT "Tags", "Count" FROM "OpenTelemetryMetric" WHERE "Name" = 'service.engine.stage.duration'`,
    );
    // Stages seen by earlier tests hold places too: at most MAX_STAGES series and the overflow one.
    expect(rows.length).toBeLessThanOrEqual(MAX_STAGES + 1);
    const overflow = Number(rows.find((r) => r.Tags.stage === OVERFLOW_STAGE)?.Count);
    expect(overflow).toBeGreaterThanOrEqual(50);
    expect(rows.filter((r) => r.Tags.stage !== OVERFLOW_STAGE).length + overflow).toBe(MAX_STAGES + 50);
  });

  it('never overlaps two flushes', async () => {
    telemetry.recordArchiverStage(randomUUID(), 'M', ArchiverStage.BuildArchiveJson, 500_000, randomUUID());
    const [a, b] = await Promise.all([flusher.flush(), flusher.flush()]);
    expect(a.ok && b.ok).toBe(true);
    expect(a.written.ArchiverWarning).toBe(1);
    expect(b.written.ArchiverWarning).toBe(0);
    expect(await health()).toHaveLength(12);
  });

  it('shows the flushed rows through the landlord reads', async () => {
    telemetry.recordCaseCreationStage(CaseCreationStage.Notification, 90_000, caseContext('=cmd()', 'ops@example.com'));
    await flusher.flush();
    const { token, browser } = await signInAdministrator(t);
    const res = await browser.get('/api/CaptureQueueHealth', { authorization: `Bearer ${token}` });
    expect(res.json.total).toBe(6);
    expect(res.json.rows.map((r: any) => r.queueName).sort()).toEqual(
      ['ArchiverWarning', 'CaseCreationWarning', 'ModelInvokeWarning', 'OpenTelemetryMetric', 'RedisConnectionEvent', 'RedisSentinelEvent'].sort(),
    );
    const csv = await browser.get('/api/CaseCreationWarning?format=csv', { authorization: `Bearer ${token}` });
    expect(csv.text).toContain("'=cmd()");
  });
});
