import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { createApp } from '../src/bootstrap';
import { resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { CaptureFlusher } from '../src/capture-queues/capture-flusher.service';
import { PipelineTelemetry } from '../src/telemetry/pipeline-telemetry.service';
import { ArchiverStage } from '../src/telemetry/telemetry.types';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { CONTRACT_TELEMETRY_TABLES } from './helpers/telemetry';
import { signInAdministrator, signInTenantAdministrator } from './helpers/users';

/*
 * GET /api/<table>/Series (contract 17). Rows are planted in private windows (years away from now and
 * from each other) and every figure of every answer is recomputed here, independently, from the planted
 * rows: buckets, groups, the top-20-plus-other rule, names, count/sum/mean/min/max, the stage
 * counters' invocations and meanMicroseconds.
 */

const MINUTE = 60_000;
const STRONG = 'Tenant-Adm1n-Password!';
const STAGES: Record<number, string> = { 1: 'BuildArchiveJson', 2: 'CaseCreationDispatch', 3: 'RdbmsArchiveWrite', 4: 'BulkCopyArchiveBuffer' };
const QUEUES: Record<number, string> = {
  1: 'ModelInvokeWarning',
  2: 'CaseCreationWarning',
  3: 'ArchiverWarning',
  4: 'RedisSentinelEvent',
  5: 'RedisConnectionEvent',
  6: 'OpenTelemetryMetric',
};

/** A planted row as the expectation sees it: its date, its group values and its column values. */
interface Planted {
  at: number;
  groups: Record<string, string | null>;
  values: Record<string, number | null>;
  name?: string | null;
}

interface Expectation {
  from: number;
  to: number;
  bucketSeconds: number;
  by?: string;
  column: string | null;
  /** Shown name of a group key. */
  nameOf?: (key: string, rows: Planted[]) => string | null;
  counters?: boolean;
}

/** The answer contract 17 describes, computed from the planted rows alone. */
function expectedSeries(planted: Planted[], e: Expectation) {
  const width = e.bucketSeconds * 1000;
  const inWindow = planted.filter((r) => r.at >= e.from && r.at <= e.to);
  const groups = new Map<string, Planted[]>();
  for (const r of inWindow) {
    const key = e.by ? (r.groups[e.by] ?? '(null)') : 'all';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  // Most rows first, then the key in byte order; a NULL group sorts before every key on ties.
  const order = (k: string) => (k === '(null)' ? '\u0001' : k);
  const ranked = [...groups.entries()].sort(([ka, a], [kb, b]) => b.length - a.length || (order(ka) < order(kb) ? -1 : order(ka) > order(kb) ? 1 : 0));
  const kept = ranked.slice(0, 20);
  const rest = ranked.slice(20).flatMap(([, rows]) => rows);
  const shaped = kept.map(([key, rows]) => ({ key, name: e.by && key !== '(null)' && e.nameOf ? e.nameOf(key, rows) : null, rows }));
  if (rest.length > 0) shaped.push({ key: 'other', name: null, rows: rest });
  const series = shaped.map(({ key, name, rows }) => {
    const buckets = new Map<number, Planted[]>();
    for (const r of rows) {
      const at = Math.floor(r.at / width) * width;
      buckets.set(at, [...(buckets.get(at) ?? []), r]);
    }
    const points = [...buckets.entries()]
      .sort(([a], [b]) => a - b)
      .map(([at, bucket]) => {
        const point: Record<string, unknown> = { at: new Date(at).toISOString(), count: bucket.length };
        if (e.column !== null) {
          const values = bucket.map((r) => r.values[e.column!]).filter((v): v is number => v !== null);
          const sum = values.reduce((a, b) => a + b, 0);
          Object.assign(point, {
            sum,
            mean: values.length ? sum / values.length : 0,
            min: values.length ? Math.min(...values) : 0,
            max: values.length ? Math.max(...values) : 0,
          });
        }
        if (e.counters) {
          const invocations = bucket.reduce((a, r) => a + r.values.invokeCount!, 0);
          const total = bucket.reduce((a, r) => a + r.values.totalMicroseconds!, 0);
          Object.assign(point, { invocations, meanMicroseconds: invocations > 0 ? total / invocations : 0 });
        }
        return point;
      });
    return { key, name, points };
  });
  if (!e.by && series.length === 0) series.push({ key: 'all', name: null, points: [] });
  return { column: e.column, bucketSeconds: e.bucketSeconds, from: new Date(e.from).toISOString(), to: new Date(e.to).toISOString(), series };
}

/** A deterministic spread of values (no randomness: a failure can be replayed). */
const spread = (i: number, base: number) => base + ((i * 7919) % 1000) * 1000 + (i % 7);

describe('telemetry series (contract 17)', () => {
  let t: TestApp;
  let admin: Browser;
  let token: string;
  const get = (path: string) => admin.get(path, { authorization: `Bearer ${token}` });
  const iso = (ms: number) => new Date(ms).toISOString();
  /** Private windows: each test plants in its own year. */
  const yearStart = (year: number) => Date.UTC(year, 0, 1);

  async function plantArchiverWarnings(rows: { at: number; stageId: number; model: string; name: string | null; instance: string | null; duration: number }[]) {
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                      "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT d, m, n, NULL, s, v, d, i FROM unnest($1::timestamptz[], $2::uuid[], $3::text[], $4::smallint[], $5::bigint[], $6::text[]) AS x(d, m, n, s, v, i)`,
      [rows.map((r) => iso(r.at)), rows.map((r) => r.model), rows.map((r) => r.name), rows.map((r) => r.stageId), rows.map((r) => r.duration), rows.map((r) => r.instance)],
    );
    return rows.map<Planted>((r) => ({
      at: r.at,
      groups: { stageId: String(r.stageId), entityAnalysisModelGuid: r.model, instance: r.instance },
      values: { durationMicroseconds: r.duration },
      name: r.name,
    }));
  }

  const model = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  /** The greatest name planted for a model in the window (what the service shows when names differ). */
  const greatestName = (_key: string, rows: Planted[]) =>
    rows.map((r) => r.name ?? null).reduce<string | null>((a, b) => (b === null ? a : a === null || b > a ? b : a), null);

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token } = await signInAdministrator(t));
  });
  afterAll(async () => t.close());

  it('buckets, groups and names ArchiverWarning rows exactly, with the read filters', async () => {
    const base = yearStart(2031);
    // A window that starts and ends inside minutes, with rows just outside it on both sides.
    const from = base + 3 * MINUTE + 17_250;
    const to = from + 3 * 3_600_000 + 41_500;
    const rows = [];
    for (let i = 0; i < 400; i++) {
      const at = from - 20_000 + Math.floor((i * (to - from + 40_000)) / 399);
      rows.push({
        at,
        stageId: 1 + (i % 4),
        model: model(i % 5),
        // A model named two ways in the window: the greatest name is shown.
        name: i % 5 === 4 ? null : i % 5 === 3 ? (i % 2 ? 'Zeta model' : 'Alpha model') : `Model ${i % 5}`,
        instance: i % 11 === 0 ? null : `node-${i % 3}`,
        duration: spread(i, 10_000_000),
      });
    }
    const planted = await plantArchiverWarnings(rows);
    expect(planted.some((r) => r.at < from) && planted.some((r) => r.at > to)).toBe(true);
    const window = `from=${iso(from)}&to=${iso(to)}`;
    const column = 'durationMicroseconds';

    const none = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=900`);
    expect(none.status).toBe(200);
    expect(Object.keys(none.json)).toEqual(['column', 'bucketSeconds', 'from', 'to', 'series']);
    expect(none.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 900, column }));

    const byStage = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=600&by=stageId`);
    expect(byStage.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 600, by: 'stageId', column, nameOf: (k) => STAGES[Number(k)] }));
    expect(byStage.json.series.map((s: { name: string }) => s.name).sort()).toEqual(Object.values(STAGES).sort());

    const byModel = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=3600&by=entityAnalysisModelGuid`);
    expect(byModel.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 3600, by: 'entityAnalysisModelGuid', column, nameOf: greatestName }));
    expect(byModel.json.series.find((s: { key: string }) => s.key === model(3)).name).toBe('Zeta model');
    expect(byModel.json.series.find((s: { key: string }) => s.key === model(4)).name).toBeNull();

    const byInstance = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=120&by=instance`);
    expect(byInstance.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 120, by: 'instance', column }));
    expect(byInstance.json.series.map((s: { key: string }) => s.key)).toContain('(null)');

    // Buckets that are not whole minutes (90 s), still aligned to the epoch.
    const odd = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=90&by=stageId`);
    expect(odd.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 90, by: 'stageId', column, nameOf: (k) => STAGES[Number(k)] }));

    // The read's filters: stageId and entityAnalysisModelGuid (any case).
    const filtered = await get(`/api/ArchiverWarning/Series?${window}&bucketSeconds=900&stageId=2&entityAnalysisModelGuid=${model(1).toUpperCase()}&by=instance`);
    const matching = planted.filter((r) => r.groups.stageId === '2' && r.groups.entityAnalysisModelGuid === model(1));
    expect(matching.length).toBeGreaterThan(0);
    expect(filtered.json).toEqual(expectedSeries(matching, { from, to, bucketSeconds: 900, by: 'instance', column }));

    // A window with no whole minute in it.
    const short = await get(`/api/ArchiverWarning/Series?from=${iso(from + 5_000)}&to=${iso(from + 50_000)}&by=stageId`);
    expect(short.json).toEqual(expectedSeries(planted, { from: from + 5_000, to: from + 50_000, bucketSeconds: 60, by: 'stageId', column, nameOf: (k) => STAGES[Number(k)] }));

    // An empty window: one empty series without `by`, none with it.
    const empty = `from=${iso(base - 3_600_000)}&to=${iso(base - 60_000)}`;
    expect((await get(`/api/ArchiverWarning/Series?${empty}`)).json.series).toEqual([{ key: 'all', name: null, points: [] }]);
    expect((await get(`/api/ArchiverWarning/Series?${empty}&by=stageId`)).json.series).toEqual([]);
  });

  it('keeps the 20 groups with the most rows and sums the rest under other', async () => {
    const base = yearStart(2032);
    const from = base;
    const to = base + 2 * 3_600_000 - 1;
    const rows = [];
    // 24 instances with 1..24 rows, plus rows without an instance; two instances tie (node-t1, node-t2).
    let i = 0;
    for (let g = 1; g <= 24; g++) {
      for (let k = 0; k < g; k++) rows.push({ at: from + ((i * 37_000) % (to - from)), instance: `node-${String(g).padStart(2, '0')}`, i: i++ });
    }
    for (let k = 0; k < 9; k++) rows.push({ at: from + ((i * 37_000) % (to - from)), instance: k % 2 ? 'node-t1' : 'node-t2', i: i++ });
    for (let k = 0; k < 13; k++) rows.push({ at: from + ((i * 37_000) % (to - from)), instance: null, i: i++ });
    const planted = await plantArchiverWarnings(
      rows.map((r) => ({ at: r.at, stageId: 1 + (r.i % 4), model: model(r.i % 30), name: `M${r.i % 30}`, instance: r.instance, duration: spread(r.i, 10_000_000) })),
    );
    const res = await get(`/api/ArchiverWarning/Series?from=${iso(from)}&to=${iso(to)}&by=instance`);
    expect(res.status).toBe(200);
    const expected = expectedSeries(planted, { from, to, bucketSeconds: 60, by: 'instance', column: 'durationMicroseconds' });
    expect(res.json).toEqual(expected);
    expect(res.json.series).toHaveLength(21);
    expect(res.json.series[20].key).toBe('other');
    expect(res.json.series.map((s: { key: string }) => s.key)).toContain('(null)');
    // 30 models: 20 kept, 10 under other, with their names.
    const models = await get(`/api/ArchiverWarning/Series?from=${iso(from)}&to=${iso(to)}&by=entityAnalysisModelGuid&bucketSeconds=3600`);
    expect(models.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 3600, by: 'entityAnalysisModelGuid', column: 'durationMicroseconds', nameOf: greatestName }));
    expect(models.json.series).toHaveLength(21);
  });

  it('picks the default window and bucketSeconds as contract 17 says', async () => {
    // Half a second into the next minute but one (the clock only moves forward: sessions stay valid).
    const now = Math.ceil(Date.now() / MINUTE) * MINUTE + MINUTE + 30_500;
    t.clock.set(now);
    ({ browser: admin, token } = await signInAdministrator(t));
    const planted = await plantArchiverWarnings(
      Array.from({ length: 90 }, (_, i) => ({ at: now - 3_700_000 + i * 43_000, stageId: 1 + (i % 4), model: model(1), name: 'One', instance: 'node-a', duration: spread(i, 1) })),
    );
    const res = await get('/api/ArchiverWarning/Series');
    expect(res.json).toEqual(expectedSeries(planted, { from: now - 3_600_000, to: now, bucketSeconds: 60, column: 'durationMicroseconds' }));
    // Buckets touched by the window: 2 h aligned on minutes touches 121 one-minute buckets, so 300 s.
    const hour = Math.floor(now / 3_600_000) * 3_600_000 - 3 * 3_600_000;
    const cases: [number, number, number][] = [
      [hour, hour + 119 * MINUTE, 60],
      [hour, hour + 120 * MINUTE, 300],
      [now - 24 * 3_600_000, now, 900],
      [now - 4 * 24 * 3_600_000, now, 3600],
      [now - 5 * 24 * 3_600_000, now, 21_600],
      [now - 29 * 24 * 3_600_000, now, 21_600],
      [now - 100 * 24 * 3_600_000, now, 86_400],
      [now - 1000 * 24 * 3_600_000, now, 86_400],
    ];
    for (const [from, to, bucketSeconds] of cases) {
      const answer = await get(`/api/ArchiverWarning/Series?from=${iso(from)}&to=${iso(to)}`);
      expect({ from: iso(from), bucketSeconds: answer.json.bucketSeconds }).toEqual({ from: iso(from), bucketSeconds });
      expect(answer.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds, column: 'durationMicroseconds' }));
    }
    // Out-of-range widths are clamped, as the reads clamp numbers.
    expect((await get('/api/ArchiverWarning/Series?bucketSeconds=5')).json.bucketSeconds).toBe(60);
    expect((await get('/api/ArchiverWarning/Series?bucketSeconds=999999')).json.bucketSeconds).toBe(86_400);
    // A month of one-minute buckets would be 43,200 points a series: raised to whole minutes, at most 5000 buckets.
    const month = await get(`/api/ArchiverWarning/Series?from=${iso(now - 30 * 86_400_000)}&to=${iso(now)}&bucketSeconds=60`);
    expect(month.json.bucketSeconds).toBe(540);
    expect(month.json).toEqual(expectedSeries(planted, { from: now - 30 * 86_400_000, to: now, bucketSeconds: 540, column: 'durationMicroseconds' }));
    await t.db.query(`DELETE FROM "ArchiverWarning" WHERE "CreatedDate" > now() - interval '3 hours'`);
  });

  it('gives the stage counters invocations and meanMicroseconds, and every statistics column', async () => {
    const base = yearStart(2034);
    const from = base + 30_000;
    const to = base + 3_600_000;
    const rows = Array.from({ length: 120 }, (_, i) => ({
      at: base + i * 29_000,
      stageId: 1 + (i % 4),
      model: model(i % 3),
      total: i % 17 === 0 ? 0 : spread(i, 500),
      min: i,
      max: 1000 + i,
      invokes: i % 17 === 0 ? 0 : 1 + (i % 9),
      instance: `node-${i % 2}`,
    }));
    await t.db.query(
      `INSERT INTO "ArchiverStagePerformanceCounter" ("EntityAnalysisModelGuid", "StageId", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount", "CreatedDate", "Instance")
       SELECT * FROM unnest($1::uuid[], $2::smallint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::timestamptz[], $8::text[])`,
      [rows.map((r) => r.model), rows.map((r) => r.stageId), rows.map((r) => r.total), rows.map((r) => r.min), rows.map((r) => r.max), rows.map((r) => r.invokes), rows.map((r) => iso(r.at)), rows.map((r) => r.instance)],
    );
    await t.db.query(
      `INSERT INTO "CaseCreationStagePerformanceCounter" ("StageId", "TotalMicroseconds", "MinMicroseconds", "MaxMicroseconds", "InvokeCount", "CreatedDate", "Instance")
       SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::timestamptz[], $7::text[])`,
      [rows.map((r) => r.stageId), rows.map((r) => r.total), rows.map((r) => r.min), rows.map((r) => r.max), rows.map((r) => r.invokes), rows.map((r) => iso(r.at)), rows.map((r) => r.instance)],
    );
    const planted = rows.map<Planted>((r) => ({
      at: r.at,
      groups: { stageId: String(r.stageId), entityAnalysisModelGuid: r.model, instance: r.instance },
      values: { totalMicroseconds: r.total, minMicroseconds: r.min, maxMicroseconds: r.max, invokeCount: r.invokes },
    }));
    const window = `from=${iso(from)}&to=${iso(to)}`;
    const res = await get(`/api/ArchiverStagePerformanceCounter/Series?${window}&by=stageId&bucketSeconds=300`);
    expect(res.status).toBe(200);
    const expected = expectedSeries(planted, { from, to, bucketSeconds: 300, by: 'stageId', column: 'totalMicroseconds', nameOf: (k) => STAGES[Number(k)], counters: true });
    expect(res.json).toEqual(expected);
    // A bucket whose rows have no invocations has meanMicroseconds 0 (one-minute buckets: one row of a stage each).
    const minutes = await get(`/api/ArchiverStagePerformanceCounter/Series?${window}&by=stageId&bucketSeconds=60`);
    expect(minutes.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 60, by: 'stageId', column: 'totalMicroseconds', nameOf: (k) => STAGES[Number(k)], counters: true }));
    const points = minutes.json.series.flatMap((s: { points: { invocations: number; meanMicroseconds: number }[] }) => s.points);
    expect(points.some((p: { invocations: number; meanMicroseconds: number }) => p.invocations === 0 && p.meanMicroseconds === 0)).toBe(true);
    for (const column of ['minMicroseconds', 'maxMicroseconds', 'invokeCount']) {
      const other = await get(`/api/ArchiverStagePerformanceCounter/Series?${window}&column=${column}&by=entityAnalysisModelGuid&bucketSeconds=900`);
      expect(other.json).toEqual(expectedSeries(planted, { from, to, bucketSeconds: 900, by: 'entityAnalysisModelGuid', column, nameOf: () => null, counters: true }));
    }
    const caseNames: Record<number, string> = { 1: 'ExistingCasePriorityLookup', 2: 'WorkflowStatusLookupAndPersist', 3: 'Notification', 4: 'HttpEndpoint' };
    const caseCreation = await get(`/api/CaseCreationStagePerformanceCounter/Series?${window}&by=stageId&bucketSeconds=600&stageId=3`);
    expect(caseCreation.json).toEqual(
      expectedSeries(
        planted.filter((r) => r.groups.stageId === '3'),
        { from, to, bucketSeconds: 600, by: 'stageId', column: 'totalMicroseconds', nameOf: (k) => caseNames[Number(k)], counters: true },
      ),
    );
  });

  it('serves the other tables: queues named, models named by their rows, Redis events as counts only', async () => {
    const base = yearStart(2035);
    const from = base;
    const to = base + 3_600_000;
    const n = 60;
    const at = (i: number) => base + 10_000 + i * 55_000;
    await t.db.query(
      `INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate", "Instance")
       SELECT 1 + g % 6, (g * 13) % 500, g % 4, $1::timestamptz + g * interval '55 seconds', 'node-' || g % 2 FROM generate_series(0, $2::int - 1) g`,
      [iso(base + 10_000), n],
    );
    const health = Array.from({ length: n }, (_, g) => ({
      at: at(g),
      groups: { queueId: String(1 + (g % 6)), instance: `node-${g % 2}` },
      values: { queueDepth: (g * 13) % 500, droppedCount: g % 4 },
    }));
    const queue = await get(`/api/CaptureQueueHealth/Series?from=${iso(from)}&to=${iso(to)}&by=queueId&column=droppedCount&bucketSeconds=900`);
    expect(queue.json).toEqual(expectedSeries(health, { from, to, bucketSeconds: 900, by: 'queueId', column: 'droppedCount', nameOf: (k) => QUEUES[Number(k)] }));
    const depth = await get(`/api/CaptureQueueHealth/Series?from=${iso(from)}&to=${iso(to)}&queueId=3`);
    expect(depth.json).toEqual(expectedSeries(health.filter((r) => r.groups.queueId === '3'), { from, to, bucketSeconds: 60, column: 'queueDepth' }));

    // ModelInvokeWarning: the window bounds OccurredDate, not CreatedDate.
    await t.db.query(
      `INSERT INTO "ModelInvokeWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "Message", "ElapsedMicroseconds", "SinceLastEntryMicroseconds", "CreatedDate", "Instance")
       SELECT $1::timestamptz + g * interval '55 seconds', ('00000000-0000-4000-8000-' || lpad((g % 3)::text, 12, '0'))::uuid, 'Model ' || g % 3, 'm',
              g * 1000, g * 10, now(), 'node-a' FROM generate_series(0, $2::int - 1) g`,
      [iso(base + 10_000), n],
    );
    const invokes = Array.from({ length: n }, (_, g) => ({
      at: at(g),
      groups: { entityAnalysisModelGuid: model(g % 3), instance: 'node-a' },
      values: { elapsedMicroseconds: g * 1000, sinceLastEntryMicroseconds: g * 10 },
      name: `Model ${g % 3}`,
    }));
    const byModel = await get(`/api/ModelInvokeWarning/Series?from=${iso(from)}&to=${iso(to)}&by=entityAnalysisModelGuid&column=sinceLastEntryMicroseconds&bucketSeconds=600`);
    expect(byModel.json).toEqual(expectedSeries(invokes, { from, to, bucketSeconds: 600, by: 'entityAnalysisModelGuid', column: 'sinceLastEntryMicroseconds', nameOf: greatestName }));

    // CaseCreationWarning by stage.
    await t.db.query(
      `INSERT INTO "CaseCreationWarning" ("OccurredDate", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT now(), 1 + g % 4, 20000000 + g, $1::timestamptz + g * interval '55 seconds', 'node-a' FROM generate_series(0, $2::int - 1) g`,
      [iso(base + 10_000), n],
    );
    const cases = Array.from({ length: n }, (_, g) => ({ at: at(g), groups: { stageId: String(1 + (g % 4)) }, values: { durationMicroseconds: 20_000_000 + g } }));
    const caseNames: Record<number, string> = { 1: 'ExistingCasePriorityLookup', 2: 'WorkflowStatusLookupAndPersist', 3: 'Notification', 4: 'HttpEndpoint' };
    expect((await get(`/api/CaseCreationWarning/Series?from=${iso(from)}&to=${iso(to)}&by=stageId&bucketSeconds=1800`)).json).toEqual(
      expectedSeries(cases, { from, to, bucketSeconds: 1800, by: 'stageId', column: 'durationMicroseconds', nameOf: (k) => caseNames[Number(k)] }),
    );

    // OpenTelemetryMetric: double columns (whole values, so sums are exact), Min nullable.
    await t.db.query(
      `INSERT INTO "OpenTelemetryMetric" ("Name", "Tags", "Count", "Sum", "Min", "Max", "CreatedDate", "Instance")
       SELECT 'service.engine.stage.duration', '{}', g, g * 2.5, CASE WHEN g % 5 = 0 THEN NULL ELSE g END, g + 1,
              $1::timestamptz + g * interval '55 seconds', 'node-' || g % 2 FROM generate_series(0, $2::int - 1) g`,
      [iso(base + 10_000), n],
    );
    const metrics = Array.from({ length: n }, (_, g) => ({
      at: at(g),
      groups: { instance: `node-${g % 2}` },
      values: { count: g, sum: g * 2.5, min: g % 5 === 0 ? null : g, max: g + 1 },
    }));
    for (const column of ['sum', 'min']) {
      const metric = await get(`/api/OpenTelemetryMetric/Series?from=${iso(from)}&to=${iso(to)}&by=instance&column=${column}&bucketSeconds=300`);
      expect(metric.json).toEqual(expectedSeries(metrics, { from, to, bucketSeconds: 300, by: 'instance', column }));
    }

    // The Redis event tables: no column, points carry count only.
    for (const table of ['RedisConnectionEvent', 'RedisSentinelEvent']) {
      await t.db.query(
        `INSERT INTO "${table}" ("OccurredDate", "EventName", "CreatedDate", "Instance")
         SELECT now(), 'reconnecting', $1::timestamptz + g * interval '55 seconds', 'node-' || g % 3 FROM generate_series(0, $2::int - 1) g`,
        [iso(base + 10_000), n],
      );
      const events = Array.from({ length: n }, (_, g) => ({ at: at(g), groups: { instance: `node-${g % 3}` }, values: {} }));
      const res = await get(`/api/${table}/Series?from=${iso(from)}&to=${iso(to)}&by=instance&bucketSeconds=600`);
      expect(res.json).toEqual(expectedSeries(events, { from, to, bucketSeconds: 600, by: 'instance', column: null }));
      expect(Object.keys(res.json.series[0].points[0])).toEqual(['at', 'count']);
      const column = await get(`/api/${table}/Series?column=count`);
      expect(column.status).toBe(400);
      expect(column.json.errors[0].field).toBe('column');
    }
  });

  it('applies the grid sample: the sampled rows only, a subset of the full answer', async () => {
    const base = yearStart(2036);
    const planted = await plantArchiverWarnings(
      Array.from({ length: 300 }, (_, i) => ({ at: base + i * 10_000, stageId: 1 + (i % 4), model: model(1), name: 'S', instance: 'node-a', duration: spread(i, 10) })),
    );
    const window = `from=${iso(base)}&to=${iso(base + 3_600_000)}&bucketSeconds=900`;
    const full = (await get(`/api/ArchiverWarning/Series?${window}`)).json;
    expect(full).toEqual(expectedSeries(planted, { from: base, to: base + 3_600_000, bucketSeconds: 900, column: 'durationMicroseconds' }));
    expect((await get(`/api/ArchiverWarning/Series?${window}&samplePercentage=100`)).json).toEqual(full);
    expect((await get(`/api/ArchiverWarning/Series?${window}&samplePercentage=0`)).json.series).toEqual([{ key: 'all', name: null, points: [] }]);
    const half = (await get(`/api/ArchiverWarning/Series?${window}&samplePercentage=50`)).json;
    const total = (s: { points: { count: number }[] }) => s.points.reduce((a, p) => a + p.count, 0);
    expect(total(half.series[0])).toBeGreaterThan(60);
    expect(total(half.series[0])).toBeLessThan(240);
    for (const point of half.series[0].points) {
      const whole = full.series[0].points.find((p: { at: string }) => p.at === point.at);
      expect(point.count).toBeLessThanOrEqual(whole.count);
      expect(point.min).toBeGreaterThanOrEqual(whole.min);
      expect(point.max).toBeLessThanOrEqual(whole.max);
    }
  });

  it('carries the model name from the capture entry into ArchiverStagePerformanceCounter rows, its search and its series', async () => {
    const telemetry = t.app.get(PipelineTelemetry);
    const flusher = t.app.get(CaptureFlusher);
    await flusher.flush();
    await t.db.query(`TRUNCATE "ArchiverStagePerformanceCounter"`);
    const card = model(71);
    const other = model(72);
    // Control characters are stripped and the name bounded (256 code points), as the warnings' names are.
    telemetry.recordArchiverStage(card, 'Card\u0000 Fraud\u001b', ArchiverStage.BuildArchiveJson, 400);
    telemetry.recordArchiverStage(card, 'Card Fraud', ArchiverStage.BuildArchiveJson, 600);
    telemetry.recordArchiverStage(card, 'Card Fraud', ArchiverStage.RdbmsArchiveWrite, 2000);
    telemetry.recordArchiverStage(other, 'x'.repeat(300), ArchiverStage.BuildArchiveJson, 100);
    telemetry.recordArchiverStage(model(73), null, ArchiverStage.BuildArchiveJson, 100);
    const report = await flusher.flush();
    expect(report.written.ArchiverStagePerformanceCounter).toBe(4);
    const stored = await t.db.query<{ EntityAnalysisModelGuid: string; EntityAnalysisModelName: string | null; StageId: number; InvokeCount: string }>(
      `SELECT "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "InvokeCount" FROM "ArchiverStagePerformanceCounter" ORDER BY "EntityAnalysisModelGuid", "StageId"`,
    );
    expect(stored).toEqual([
      { EntityAnalysisModelGuid: card, EntityAnalysisModelName: 'Card Fraud', StageId: 1, InvokeCount: '2' },
      { EntityAnalysisModelGuid: card, EntityAnalysisModelName: 'Card Fraud', StageId: 3, InvokeCount: '1' },
      { EntityAnalysisModelGuid: other, EntityAnalysisModelName: 'x'.repeat(256), StageId: 1, InvokeCount: '1' },
      { EntityAnalysisModelGuid: model(73), EntityAnalysisModelName: null, StageId: 1, InvokeCount: '1' },
    ]);

    const rows = await get('/api/ArchiverStagePerformanceCounter?sortField=entityAnalysisModelName&sortDirection=asc');
    expect(rows.status).toBe(200);
    expect(Object.keys(rows.json.rows[0])).toEqual([
      'id',
      'entityAnalysisModelGuid',
      'entityAnalysisModelName',
      'stageId',
      'stageName',
      'totalMicroseconds',
      'minMicroseconds',
      'maxMicroseconds',
      'invokeCount',
      'createdDate',
      'instance',
    ]);
    expect(rows.json.rows.map((r: { entityAnalysisModelName: string | null }) => r.entityAnalysisModelName)).toEqual(['Card Fraud', 'Card Fraud', 'x'.repeat(256), null]);
    const searched = await get('/api/ArchiverStagePerformanceCounter?search=card%20FRAUD');
    expect(searched.json.total).toBe(2);
    expect(searched.json.statistics.invokeCount).toMatchObject({ min: 1, max: 2 });
    expect((await get(`/api/ArchiverStagePerformanceCounter?entityAnalysisModelGuid=${card}&stageId=3`)).json.rows[0].entityAnalysisModelName).toBe('Card Fraud');
    const csv = await admin.get('/api/ArchiverStagePerformanceCounter?format=csv', { authorization: `Bearer ${token}` });
    expect(csv.text.split('\r\n')[0]).toContain('entityAnalysisModelName');

    const series = await get('/api/ArchiverStagePerformanceCounter/Series?by=entityAnalysisModelGuid');
    expect(series.json.series.map((s: { key: string; name: string | null; points: { invocations: number }[] }) => [s.key, s.name, s.points.reduce((a, p) => a + p.invocations, 0)])).toEqual([
      [card, 'Card Fraud', 3],
      [model(72), 'x'.repeat(256), 1],
      [model(73), null, 1],
    ]);
  });

  it('answers 400 naming each parameter that does not parse', async () => {
    for (const [path, field] of [
      ['ArchiverWarning/Series?from=notadate', 'from'],
      ['ArchiverWarning/Series?to=yesterday', 'to'],
      ['ArchiverWarning/Series?from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', 'from'],
      ['ArchiverWarning/Series?samplePercentage=half', 'samplePercentage'],
      ['ArchiverWarning/Series?bucketSeconds=abc', 'bucketSeconds'],
      ['ArchiverWarning/Series?bucketSeconds=90.5', 'bucketSeconds'],
      ['ArchiverWarning/Series?column=stageId', 'column'],
      ['ArchiverWarning/Series?column=nope', 'column'],
      ['ArchiverWarning/Series?by=queueId', 'by'],
      ['ArchiverWarning/Series?by=nope', 'by'],
      ['ArchiverWarning/Series?stageId=two', 'stageId'],
      ['ArchiverWarning/Series?entityAnalysisModelGuid=not-a-guid', 'entityAnalysisModelGuid'],
      ['CaptureQueueHealth/Series?queueId=x', 'queueId'],
      ['CaptureQueueHealth/Series?by=stageId', 'by'],
      ['CaseCreationStagePerformanceCounter/Series?by=entityAnalysisModelGuid', 'by'],
      ['ModelInvokeWarning/Series?by=stageId', 'by'],
      ['OpenTelemetryMetric/Series?column=tags', 'column'],
      ['RedisSentinelEvent/Series?by=stageId', 'by'],
    ]) {
      const res = await get(`/api/${path}`);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
  });

  it('refuses every series to a non-landlord (403) and to an anonymous caller (401), and lists them in OpenAPI', async () => {
    const tenant = await signInTenantAdministrator(t, 'tenant-admin', STRONG);
    const anonymous = new Browser(t.url);
    for (const table of CONTRACT_TELEMETRY_TABLES) {
      expect((await tenant.get(`/api/${table}/Series`)).status).toBe(403);
      expect((await anonymous.get(`/api/${table}/Series`)).status).toBe(401);
      expect((await get(`/api/${table}/Series`)).status).toBe(200);
    }
    const document = (await get('/swagger/v1/swagger.json')).json;
    for (const table of CONTRACT_TELEMETRY_TABLES) {
      const operation = document.paths[`/api/${table}/Series`]?.get;
      expect(operation).toBeDefined();
      const names = operation.parameters.map((p: { name: string }) => p.name);
      expect(names).toEqual(expect.arrayContaining(['from', 'to', 'samplePercentage', 'bucketSeconds', 'by']));
    }
  });
});

/**
 * The rollup (decision 0021) against the rows it summarises: every minute and key, computed here from
 * ArchiverWarning with a full outer join, must equal the rollup's row exactly; the rows that differ.
 */
async function rollupDrift(t: TestApp) {
  return t.db.query(
    `WITH truth AS (
       SELECT date_bin('1 minute', "CreatedDate", '1970-01-01T00:00:00Z') AS "Minute", "StageId", "EntityAnalysisModelGuid", "Instance",
              max("EntityAnalysisModelName") AS "Name", count(*) AS "Rows", sum("DurationMicroseconds") AS "Sum",
              min("DurationMicroseconds") AS "Min", max("DurationMicroseconds") AS "Max"
         FROM "ArchiverWarning" GROUP BY 1, 2, 3, 4)
     SELECT t.*, r."Rows" AS "RollupRows", r."DurationMicrosecondsSum" AS "RollupSum"
       FROM truth t FULL JOIN "ArchiverWarningMinute" r
         ON r."Minute" = t."Minute" AND r."StageId" IS NOT DISTINCT FROM t."StageId"
        AND r."EntityAnalysisModelGuid" IS NOT DISTINCT FROM t."EntityAnalysisModelGuid" AND r."Instance" IS NOT DISTINCT FROM t."Instance"
      WHERE t."Minute" IS NULL OR r."Minute" IS NULL OR r."Rows" <> t."Rows" OR r."DurationMicrosecondsSum" <> t."Sum"
         OR r."DurationMicrosecondsMin" <> t."Min" OR r."DurationMicrosecondsMax" <> t."Max" OR r."EntityAnalysisModelName" IS DISTINCT FROM t."Name"`,
  );
}

describe('the ArchiverWarning per-minute rollup stays exactly the rows (decision 0021)', () => {
  let t: TestApp;
  let token: string;
  let admin: Browser;
  const get = (path: string) => admin.get(path, { authorization: `Bearer ${token}` });
  const iso = (ms: number) => new Date(ms).toISOString();
  const rowsIn = async (from: number, to: number, where = 'true') =>
    Number(
      (await t.db.query<{ n: string }>(`SELECT count(*) AS n FROM "ArchiverWarning" WHERE "CreatedDate" >= $1 AND "CreatedDate" <= $2 AND ${where}`, [iso(from), iso(to)]))[0]
        .n,
    );

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token } = await signInAdministrator(t));
  });
  afterAll(async () => t?.close());

  it('through flushes, a failed flush retried table by table, a restart, deletes, updates and truncation', async () => {
    const telemetry = () => t.app.get(PipelineTelemetry);
    const flusher = () => t.app.get(CaptureFlusher);
    const slow = 10_000_001;
    const record = (i: number) =>
      telemetry().recordArchiverStage(`00000000-0000-4000-8000-00000000000${i % 3}`, i % 4 ? `Model ${i % 3}` : null, 1 + (i % 4), slow + i * 17, null);
    for (let minute = 0; minute < 3; minute++) {
      for (let i = 0; i < 40; i++) record(i + minute);
      expect((await flusher().flush()).written.ArchiverWarning).toBe(40);
      t.clock.advance(MINUTE);
    }
    expect(await rollupDrift(t)).toEqual([]);
    expect(Number((await t.db.query<{ n: string }>(`SELECT sum("Rows") AS n FROM "ArchiverWarningMinute"`))[0].n)).toBe(120);

    // A flush whose one transaction fails (an entry the database refuses) is rolled back, trigger
    // work included, then written table by table: nothing counted twice, the refused entry not at all.
    await t.db.query(`ALTER TABLE "ArchiverWarning" ADD CONSTRAINT tm_test_refuse CHECK ("EntityAnalysisModelName" <> 'refused')`);
    try {
      for (let i = 0; i < 30; i++) record(i);
      telemetry().recordArchiverStage('00000000-0000-4000-8000-000000000009', 'refused', 2, slow, null);
      const report = await flusher().flush();
      expect(report.setAside).toEqual({ ArchiverWarning: 1 });
    } finally {
      await t.db.query(`ALTER TABLE "ArchiverWarning" DROP CONSTRAINT tm_test_refuse`);
    }
    expect(await rollupDrift(t)).toEqual([]);

    // A restart: a second node on the same database writes the same minutes' keys (another instance).
    const second = await startTestApp({ db: t.db, env: { Instance: 'node-b' }, clock: t.clock });
    try {
      const other = second.app.get(PipelineTelemetry);
      for (let i = 0; i < 25; i++) other.recordArchiverStage('00000000-0000-4000-8000-000000000001', 'Model 1', 1 + (i % 4), slow + i, null);
      for (let i = 0; i < 25; i++) record(i);
      await Promise.all([second.app.get(CaptureFlusher).flush(), flusher().flush()]);
    } finally {
      await second.close();
    }
    expect(await rollupDrift(t)).toEqual([]);

    // Rows written by other hands: planted, deleted, moved to another minute and stage.
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT now(), NULL, NULL, CASE WHEN g % 5 = 0 THEN NULL ELSE 1 + g % 4 END, 20000000 + g, $1::timestamptz - g * interval '7 seconds', CASE WHEN g % 7 = 0 THEN NULL ELSE 'planted' END
         FROM generate_series(1, 500) g`,
      [iso(t.clock.nowMs())],
    );
    expect(await rollupDrift(t)).toEqual([]);
    await t.db.query(`DELETE FROM "ArchiverWarning" WHERE "Id" % 3 = 0`);
    expect(await rollupDrift(t)).toEqual([]);
    await t.db.query(`UPDATE "ArchiverWarning" SET "CreatedDate" = "CreatedDate" - interval '90 seconds', "StageId" = 4 WHERE "Id" % 5 = 1`);
    expect(await rollupDrift(t)).toEqual([]);
    await t.db.query(`UPDATE "ArchiverWarning" SET "DurationMicroseconds" = 1 WHERE "Id" % 7 = 2`);
    expect(await rollupDrift(t)).toEqual([]);

    // The reads agree with the rows on windows that start and end inside minutes.
    const now = t.clock.nowMs();
    for (const [from, to] of [
      [now - 3_600_000 + 12_345, now - 1_234],
      [now - 20 * MINUTE + 59_999, now - 3 * MINUTE + 1],
      [now - 5 * MINUTE + 100, now - 4 * MINUTE - 100],
    ]) {
      const grid = await get(`/api/ArchiverWarning?from=${iso(from)}&to=${iso(to)}&take=0`);
      expect(grid.json.total).toBe(await rowsIn(from, to));
      const series = await get(`/api/ArchiverWarning/Series?from=${iso(from)}&to=${iso(to)}&by=stageId&stageId=4`);
      const counted = series.json.series.flatMap((x: { points: { count: number }[] }) => x.points).reduce((a: number, p: { count: number }) => a + p.count, 0);
      expect(counted).toBe(await rowsIn(from, to, `"StageId" = 4`));
    }

    await t.db.query(`TRUNCATE "ArchiverWarning"`);
    expect(await t.db.query(`SELECT 1 FROM "ArchiverWarningMinute"`)).toEqual([]);
  });

  it('counts more than 100,000 rows exactly from the rollup, and ignores minutes whose rows left without triggers (retention)', async () => {
    const end = Math.floor(t.clock.nowMs() / MINUTE) * MINUTE - 10 * MINUTE;
    // 120,000 rows over 50 minutes, ending 10 minutes ago: more than the statistics read.
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       SELECT now(), 1 + g % 4, 10000000 + g % 1000, $1::timestamptz - g * interval '25 milliseconds', 'node-' || g % 3 FROM generate_series(0, 119999) g`,
      [iso(end)],
    );
    expect(await rollupDrift(t)).toEqual([]);
    const from = end - 40 * MINUTE + 7_777;
    const to = end - 1_111;
    for (const filter of ['', '&stageId=2']) {
      const grid = await get(`/api/ArchiverWarning?from=${iso(from)}&to=${iso(to)}&take=5${filter}`);
      expect(grid.json.total).toBe(await rowsIn(from, to, filter ? `"StageId" = 2` : 'true'));
      expect(grid.json.total).toBeGreaterThan(filter ? 20_000 : 90_000);
      expect(grid.json.statistics.durationMicroseconds.histogram.reduce((a: number, h: { frequency: number }) => a + h.frequency, 0)).toBe(Math.min(100_000, grid.json.total));
    }
    // Retention drops whole day partitions (contract 16), which fires no trigger: the oldest minutes'
    // rows vanish under the rollup. Reads only take rollup minutes from the oldest row's minute on.
    await t.db.query(`ALTER TABLE "ArchiverWarning" DISABLE TRIGGER USER`);
    try {
      await t.db.query(`DELETE FROM "ArchiverWarning" WHERE "CreatedDate" < $1`, [iso(end - 30 * MINUTE)]);
    } finally {
      await t.db.query(`ALTER TABLE "ArchiverWarning" ENABLE TRIGGER USER`);
    }
    const grid = await get(`/api/ArchiverWarning?from=${iso(from)}&to=${iso(to)}&take=0`);
    expect(grid.json.total).toBe(await rowsIn(from, to));
    const series = await get(`/api/ArchiverWarning/Series?from=${iso(from)}&to=${iso(to)}&bucketSeconds=300`);
    expect(series.json.series[0].points.reduce((a: number, p: { count: number }) => a + p.count, 0)).toBe(await rowsIn(from, to));
    // The rollup itself still holds the vanished minutes (the drift check sees them) until whoever
    // removed the rows recomputes their range, as retention does after a drop.
    expect((await rollupDrift(t)).length).toBeGreaterThan(0);
    await t.db.query(`SELECT "ArchiverWarningMinute_Recompute"($1, $2)`, [iso(end - 120 * MINUTE), iso(end - 30 * MINUTE)]);
    expect(await rollupDrift(t)).toEqual([]);
    await expect(t.db.query(`SELECT "ArchiverWarningMinute_Recompute"($1, $2)`, [iso(end - 120 * MINUTE + 1), iso(end)])).rejects.toThrow(/whole minutes/);
  });
});

describe('telemetry series on the embedded default (PGlite)', () => {
  it('answers the same figures as computed from the planted rows', async () => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: mkdtempSync(join(tmpdir(), 'tm-series-')), LogLevel: 'error' }));
    const app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      const { token } = await signInAdministrator({ url });
      const base = Date.UTC(2031, 5, 1, 0, 0, 40);
      const from = base;
      const to = base + 2 * 3_600_000 + 5_000;
      const rows = Array.from({ length: 200 }, (_, i) => ({ at: base - 30_000 + i * 37_000, stageId: 1 + (i % 4), instance: `node-${i % 23}`, duration: spread(i, 10_000_000) }));
      await app.get(DataSource).query(
        `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
         SELECT d, '00000000-0000-4000-8000-000000000001', 'Embedded', s, v, d, i FROM unnest($1::timestamptz[], $2::smallint[], $3::bigint[], $4::text[]) AS x(d, s, v, i)`,
        [rows.map((r) => new Date(r.at).toISOString()), rows.map((r) => r.stageId), rows.map((r) => r.duration), rows.map((r) => r.instance)],
      );
      const planted = rows.map<Planted>((r) => ({ at: r.at, groups: { stageId: String(r.stageId), instance: r.instance }, values: { durationMicroseconds: r.duration } }));
      const browser = new Browser(url);
      const get = (path: string) => browser.get(path, { authorization: `Bearer ${token}` });
      const window = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
      expect((await get(`/api/ArchiverWarning/Series?${window}&by=stageId`)).json).toEqual(
        expectedSeries(planted, { from, to, bucketSeconds: 300, by: 'stageId', column: 'durationMicroseconds', nameOf: (k) => STAGES[Number(k)] }),
      );
      expect((await get(`/api/ArchiverWarning/Series?${window}&by=instance&bucketSeconds=900`)).json).toEqual(
        expectedSeries(planted, { from, to, bucketSeconds: 900, by: 'instance', column: 'durationMicroseconds' }),
      );
      const grid = await get(`/api/ArchiverWarning?${window}&take=1`);
      expect(grid.json.total).toBe(planted.filter((r) => r.at >= from && r.at <= to).length);
    } finally {
      await app.close();
    }
  });
});
