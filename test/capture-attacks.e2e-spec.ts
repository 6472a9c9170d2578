import { randomUUID } from 'node:crypto';
import { Bus } from '../src/bus/bus';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { CaptureQueues } from '../src/telemetry/capture-queues.service';
import { PipelineTelemetry } from '../src/telemetry/pipeline-telemetry.service';
import { ArchiverStage, CaseCreationStage } from '../src/telemetry/telemetry.types';
import { startTestApp, TestApp } from './helpers/app';
import { emptyCaptureTables } from './helpers/telemetry';

/**
 * Contract 13, capture queues, attacked with entries that cannot be written as given, through the
 * paths that produce them (the pipeline's PipelineTelemetry calls and the bus's connection events):
 * NUL, lone surrogates (high and low), bidi controls, very long text, NaN, ±Infinity, negative and
 * fractional durations, numbers past what bigint holds (one by one, and summed into a stage counter),
 * malformed GUIDs (empty, braces, a NUL, a blank), and dates out of range. Nothing blocks a flush,
 * every bad entry is counted as dropped in its queue's health row, what can be kept is kept (a stage
 * counter is never lost), and the health rows go on minute after minute.
 */
const MAX_BIGINT = 9223372036854775807n;

describe('capture entries that cannot be written as given (contract 13)', () => {
  let t: TestApp;
  let flusher: CaptureFlusher;
  let telemetry: PipelineTelemetry;

  const health = () =>
    t.db.query<{ QueueId: number; QueueDepth: number; DroppedCount: string }>(`SELECT "QueueId", "QueueDepth", "DroppedCount" FROM "CaptureQueueHealth" ORDER BY "Id"`);

  beforeAll(async () => {
    t = await startTestApp({ env: { ArchiverWarnThresholdMilliseconds: '100', CaseCreationWarnThresholdMilliseconds: '50' } });
    flusher = t.app.get(CaptureFlusher);
    telemetry = t.app.get(PipelineTelemetry);
  });
  afterAll(async () => t.close());
  beforeEach(async () => emptyCaptureTables(t));

  it('a stage counter whose total passes what bigint holds is still written (saturated), never set aside', async () => {
    const model = randomUUID();
    for (let i = 0; i < 1100; i++) {
      telemetry.recordArchiverStage(model, 'Huge', ArchiverStage.RdbmsArchiveWrite, Number.MAX_SAFE_INTEGER, randomUUID());
      telemetry.recordCaseCreationStage(CaseCreationStage.Notification, Number.MAX_SAFE_INTEGER, {
        caseWorkflowGuid: randomUUID(),
        caseWorkflowName: 'W',
        caseKey: 'K',
        caseKeyValue: String(i),
        destination: null,
      });
    }
    telemetry.recordArchiverStage(model, 'Huge', ArchiverStage.BuildArchiveJson, 1.5, randomUUID());
    const report = await flusher.flush();
    expect(report.ok).toBe(true);
    expect(report.setAside).toEqual({});
    const counters = await t.db.query<{ StageId: number; TotalMicroseconds: string; MaxMicroseconds: string; InvokeCount: string }>(
      `SELECT "StageId", "TotalMicroseconds", "MaxMicroseconds", "InvokeCount" FROM "ArchiverStagePerformanceCounter" ORDER BY "StageId"`,
    );
    expect(counters.map((c) => [c.StageId, c.InvokeCount])).toEqual([
      [ArchiverStage.BuildArchiveJson, '1'],
      [ArchiverStage.RdbmsArchiveWrite, '1100'],
    ].sort((a, b) => Number(a[0]) - Number(b[0])));
    const huge = counters.find((c) => c.StageId === ArchiverStage.RdbmsArchiveWrite)!;
    expect(BigInt(huge.TotalMicroseconds)).toBeLessThanOrEqual(MAX_BIGINT);
    expect(BigInt(huge.TotalMicroseconds)).toBeGreaterThan(9_000_000_000_000_000_000n);
    expect(huge.MaxMicroseconds).toBe(String(Number.MAX_SAFE_INTEGER));
    const cases = await t.db.query<{ TotalMicroseconds: string; InvokeCount: string }>(`SELECT "TotalMicroseconds", "InvokeCount" FROM "CaseCreationStagePerformanceCounter"`);
    expect(cases).toHaveLength(1);
    expect(cases[0].InvokeCount).toBe('1100');
    expect(BigInt(cases[0].TotalMicroseconds)).toBeLessThanOrEqual(MAX_BIGINT);
    // Every warning was a good one: all written.
    expect(await t.db.query(`SELECT count(*)::int AS n FROM "ArchiverWarning"`)).toEqual([{ n: 1100 }]);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM "CaseCreationWarning"`)).toEqual([{ n: 1100 }]);
  });

  it('hostile text, numbers, GUIDs and dates: none blocks the flush, each bad one counted as dropped, the rest written clean', async () => {
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
    // Written (cleaned): NUL, a lone low surrogate, a bidi override, 100 000 characters; an upper-case
    // GUID; a fractional duration.
    point({ message: `a\u0000b\udc00c\u202ed${'x'.repeat(100_000)}`, modelName: '\ud83d' });
    point({ modelGuid: model.toUpperCase() });
    point({ elapsedMicroseconds: 1.5 });
    // Dropped: numbers that are no duration, GUIDs that are none.
    for (const elapsedMicroseconds of [-1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e300, Number.MAX_SAFE_INTEGER + 2]) {
      point({ elapsedMicroseconds });
    }
    for (const modelGuid of ['', `{${model}}`, `${model}\u0000`, ' '.repeat(36)]) point({ modelGuid });
    point({ entryGuid: 'not-a-guid' });
    // Archiver and case creation warnings: bad GUIDs and durations are dropped; their counters keep
    // only well-formed models and finite durations.
    telemetry.recordArchiverStage(`${model.slice(0, 35)}\u0000`, 'M', ArchiverStage.BuildArchiveJson, 500_000, randomUUID());
    telemetry.recordArchiverStage(model, 'M\u0000\ud800', ArchiverStage.BuildArchiveJson, 500_000, randomUUID());
    telemetry.recordArchiverStage(model, 'M', ArchiverStage.BuildArchiveJson, 1e300, randomUUID());
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 70_000, {
      caseWorkflowGuid: 'x'.repeat(36),
      caseWorkflowName: 'W',
      caseKey: 'K',
      caseKeyValue: 'V',
      destination: null,
    });
    telemetry.recordCaseCreationStage(CaseCreationStage.HttpEndpoint, 70_000, {
      caseWorkflowGuid: randomUUID(),
      caseWorkflowName: 'W\u0000',
      caseKey: '\udfff',
      caseKeyValue: 'V'.repeat(10_000),
      destination: 'https://hooks.example.com/\u0000\u202e',
    });
    // Bus events: an invalid date, a date past year 9999, an empty name are dropped; NUL is stripped.
    const bus = t.app.get(Bus);
    const now = t.clock.now();
    bus.events.emit('connection', { kind: 'connection', eventName: 'reconnecting', endpoint: 'a', message: null, occurredDate: new Date(Number.NaN) });
    bus.events.emit('connection', { kind: 'connection', eventName: 'reconnecting', endpoint: 'a', message: null, occurredDate: new Date(Date.UTC(10000, 0, 1)) });
    bus.events.emit('connection', { kind: 'connection', eventName: '', endpoint: 'a', message: null, occurredDate: now });
    bus.events.emit('connection', { kind: 'connection', eventName: 'error\u0000', endpoint: '\ud800host', message: 'm\u0000', occurredDate: now });
    bus.events.emit('connection', { kind: 'sentinel', eventName: '\u0000', endpoint: null, message: null, occurredDate: now });

    const report = await flusher.flush();
    expect(report.ok).toBe(true);
    expect(report.setAside).toEqual({});
    const warnings = await t.db.query<{ Message: string; EntityAnalysisModelName: string; EntityAnalysisModelGuid: string; ElapsedMicroseconds: string }>(
      `SELECT "Message", "EntityAnalysisModelName", "EntityAnalysisModelGuid", "ElapsedMicroseconds" FROM "ModelInvokeWarning" ORDER BY "Id"`,
    );
    expect(warnings).toHaveLength(3);
    expect(warnings.map((w) => w.EntityAnalysisModelGuid)).toEqual([model, model, model]);
    expect(warnings[2].ElapsedMicroseconds).toBe('2');
    for (const w of warnings) {
      expect(w.Message).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
      expect(w.Message.length).toBeLessThanOrEqual(2048);
    }
    expect(await t.db.query(`SELECT "EntityAnalysisModelName" FROM "ArchiverWarning"`)).toEqual([{ EntityAnalysisModelName: 'M\ufffd' }]);
    const caseRows = await t.db.query<{ CaseWorkflowName: string; CaseKey: string }>(`SELECT "CaseWorkflowName", "CaseKey" FROM "CaseCreationWarning"`);
    expect(caseRows).toEqual([{ CaseWorkflowName: 'W', CaseKey: '\ufffd' }]);
    expect(await t.db.query(`SELECT "EventName", "Endpoint", "Message" FROM "RedisConnectionEvent"`)).toEqual([
      { EventName: 'error', Endpoint: '\ufffdhost', Message: 'm' },
    ]);
    expect(await t.db.query(`SELECT * FROM "RedisSentinelEvent"`)).toEqual([]);
    // Dropped, per queue: 11 trace points; 2 archiver warnings (GUID, duration); 1 case warning (GUID);
    // 1 Sentinel event (empty name); 3 connection events (two dates, empty name); the metric values
    // that were not finite are counted by their own queue.
    const dropped = Object.fromEntries((await health()).map((h) => [h.QueueId, Number(h.DroppedCount)]));
    expect(dropped[1]).toBe(11);
    expect(dropped[2]).toBe(1);
    expect(dropped[3]).toBe(2);
    expect(dropped[4]).toBe(1);
    expect(dropped[5]).toBe(3);

    // The next minutes flush as usual.
    for (let minute = 0; minute < 2; minute++) {
      t.clock.advance(60_000);
      point({});
      const next = await flusher.flush();
      expect(next.ok).toBe(true);
    }
    expect((await health()).length).toBe(18);
    expect(await t.db.query(`SELECT count(*)::int AS n FROM "ModelInvokeWarning"`)).toEqual([{ n: 5 }]);
    expect(t.app.get(CaptureQueues).modelInvokeWarnings.depth).toBe(0);
  });
});
