import { randomUUID } from 'node:crypto';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { CONTRACT_TELEMETRY_TABLES } from './helpers/telemetry';
import { referenceStatistics } from './helpers/reference-statistics';
import { signInAdministrator, signInTenantAdministrator } from './helpers/users';

const STRONG = 'Tenant-Adm1n-Password!';
const MINUTE = 60_000;

describe('telemetry reads (service.md 4.3, contract 10)', () => {
  let t: TestApp;
  let admin: Browser;
  let token: string;
  const now = () => t.clock.nowMs();

  const get = (path: string, headers: Record<string, string> = {}) => admin.get(path, { authorization: `Bearer ${token}`, ...headers });

  async function archiverWarning(row: { minutesAgo: number; stageId?: number; duration: number; name?: string; entry?: string | null }) {
    const created = new Date(now() - row.minutesAgo * MINUTE);
    const [inserted] = await t.db.query<{ Id: string }>(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                      "StageId", "DurationMicroseconds", "CreatedDate", "Instance")
       VALUES ($1, $2, $3, $4, $5, $6, $1, 'node-a') RETURNING "Id"`,
      [created, randomUUID(), row.name ?? 'Fraud model', row.entry === undefined ? randomUUID() : row.entry, row.stageId ?? 1, row.duration],
    );
    return Number(inserted.Id);
  }

  beforeAll(async () => {
    t = await startTestApp();
    ({ browser: admin, token } = await signInAdministrator(t));
  });
  afterAll(async () => t.close());
  beforeEach(async () => {
    await t.db.query(`TRUNCATE "ArchiverWarning", "CaseCreationWarning", "ModelInvokeWarning", "CaptureQueueHealth", "ArchiverStagePerformanceCounter"`);
  });

  it('answers the envelope with camelCase rows, stage names and bigint numbers, over the last hour by default', async () => {
    const inside = await archiverWarning({ minutesAgo: 10, stageId: 4, duration: 12_345_678_901, entry: null });
    await archiverWarning({ minutesAgo: 90, duration: 5 });
    const res = await get('/api/ArchiverWarning');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(Object.keys(res.json)).toEqual(['statistics', 'total', 'rows']);
    expect(res.json.total).toBe(1);
    const [row] = res.json.rows;
    expect(Object.keys(row)).toEqual([
      'id',
      'occurredDate',
      'entityAnalysisModelGuid',
      'entityAnalysisModelName',
      'entityAnalysisModelInstanceEntryGuid',
      'stageId',
      'stageName',
      'durationMicroseconds',
      'createdDate',
      'instance',
    ]);
    expect(row).toMatchObject({ id: inside, stageId: 4, stageName: 'BulkCopyArchiveBuffer', durationMicroseconds: 12_345_678_901, instance: 'node-a' });
    expect(row.entityAnalysisModelInstanceEntryGuid).toBeNull();
    expect(row.createdDate).toBe(new Date(now() - 10 * MINUTE).toISOString());
    expect(res.json.statistics.durationMicroseconds).toMatchObject({ min: 12_345_678_901, max: 12_345_678_901, standardDeviation: 0 });

    // Two hours later both rows are out of the default window: empty rows, zero statistics.
    t.clock.advance(120 * MINUTE);
    ({ browser: admin, token } = await signInAdministrator(t));
    const later = await get('/api/ArchiverWarning');
    expect(later.json).toEqual({
      rows: [],
      total: 0,
      statistics: { durationMicroseconds: { min: 0, max: 0, mean: 0, median: 0, standardDeviation: 0, histogram: [] } },
    });
  });

  it('defaults from and to independently, and honours explicit bounds', async () => {
    await archiverWarning({ minutesAgo: 30, duration: 1 });
    await archiverWarning({ minutesAgo: 150, duration: 2 });
    await archiverWarning({ minutesAgo: 200, duration: 3 });
    const iso = (minutesAgo: number) => encodeURIComponent(new Date(now() - minutesAgo * MINUTE).toISOString());
    const both = await get(`/api/ArchiverWarning?from=${iso(180)}&to=${iso(120)}`);
    expect(both.json.rows.map((r: any) => r.durationMicroseconds)).toEqual([2]);
    const fromOnly = await get(`/api/ArchiverWarning?from=${iso(240)}`);
    expect(fromOnly.json.total).toBe(3);
  });

  it('answers 400 naming a parameter that does not parse', async () => {
    for (const [query, field] of [
      ['from=notadate', 'from'],
      ['to=yesterday', 'to'],
      ['take=abc', 'take'],
      ['samplePercentage=lots', 'samplePercentage'],
      ['stageId=first', 'stageId'],
      [`from=${new Date(now()).toISOString()}&to=${new Date(now() - MINUTE).toISOString()}`, 'from'],
    ]) {
      const res = await get(`/api/ArchiverWarning?${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.json.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
    }
    const guid = await get('/api/ModelInvokeWarning?entityAnalysisModelGuid=not-a-guid');
    expect(guid.status).toBe(400);
    expect(guid.json.errors[0].field).toBe('entityAnalysisModelGuid');
  });

  it('clamps take and reports the full filtered count regardless of it', async () => {
    for (let i = 0; i < 5; i++) await archiverWarning({ minutesAgo: 5 + i, duration: 100 * (i + 1) });
    const two = await get('/api/ArchiverWarning?take=2');
    expect(two.json.rows).toHaveLength(2);
    expect(two.json.total).toBe(5);
    expect(two.json.statistics.durationMicroseconds.histogram.reduce((a: number, b: any) => a + b.frequency, 0)).toBe(5);
    const huge = await get('/api/ArchiverWarning?take=1000000');
    expect(huge.status).toBe(200);
    expect(huge.json.rows).toHaveLength(5);
    const negative = await get('/api/ArchiverWarning?take=-5');
    expect(negative.status).toBe(200);
    expect(negative.json.rows).toEqual([]);
    expect(negative.json.total).toBe(5);
    const overSample = await get('/api/ArchiverWarning?samplePercentage=250');
    expect(overSample.json.total).toBe(5);
  });

  it('filters by stageId, sorts by any column both ways, and falls back to newest first', async () => {
    const a = await archiverWarning({ minutesAgo: 3, stageId: 2, duration: 300 });
    const b = await archiverWarning({ minutesAgo: 2, stageId: 2, duration: 100 });
    const c = await archiverWarning({ minutesAgo: 1, stageId: 3, duration: 200 });
    const stage2 = await get('/api/ArchiverWarning?stageId=2');
    expect(stage2.json.rows.map((r: any) => r.id)).toEqual([b, a]);
    expect(stage2.json.total).toBe(2);

    const asc = await get('/api/ArchiverWarning?sortField=durationMicroseconds&sortDirection=ASC');
    expect(asc.json.rows.map((r: any) => r.durationMicroseconds)).toEqual([100, 200, 300]);
    const desc = await get('/api/ArchiverWarning?sortField=durationMicroseconds&sortDirection=whatever');
    expect(desc.json.rows.map((r: any) => r.durationMicroseconds)).toEqual([300, 200, 100]);
    const byName = await get('/api/ArchiverWarning?sortField=stageName&sortDirection=asc');
    expect(byName.json.rows.map((r: any) => r.stageName)).toEqual(['CaseCreationDispatch', 'CaseCreationDispatch', 'RdbmsArchiveWrite']);
    const unknown = await get('/api/ArchiverWarning?sortField=password&sortDirection=asc');
    expect(unknown.json.rows.map((r: any) => r.id)).toEqual([c, b, a]);
  });

  it('computes min, max, mean, median, sample standard deviation and the 10-bucket histogram in the database', async () => {
    const values = [5, 17, 17, 40, 41, 99, 150, 151, 380, 1000, 1000, 2];
    for (const [i, v] of values.entries()) await archiverWarning({ minutesAgo: 1 + i, duration: v });
    const res = await get('/api/ArchiverWarning');
    const s = res.json.statistics.durationMicroseconds;
    const e = referenceStatistics(values);
    expect(s.min).toBe(e.min);
    expect(s.max).toBe(e.max);
    expect(s.mean).toBeCloseTo(e.mean, 9);
    expect(s.median).toBeCloseTo(e.median, 9);
    expect(s.standardDeviation).toBeCloseTo(e.sd, 9);
    expect(s.histogram).toHaveLength(10);
    expect(s.histogram.map((h: any) => h.frequency)).toEqual(e.frequencies);
    const width = (e.max - e.min) / 10;
    s.histogram.forEach((h: any, i: number) => {
      expect(h.from).toBeCloseTo(e.min + width * i, 9);
      expect(h.to).toBeCloseTo(i === 9 ? e.max : e.min + width * (i + 1), 9);
    });
  });

  it('puts every value in the first bucket when min equals max', async () => {
    for (let i = 0; i < 3; i++) await archiverWarning({ minutesAgo: 1 + i, duration: 42 });
    const s = (await get('/api/ArchiverWarning')).json.statistics.durationMicroseconds;
    expect(s).toMatchObject({ min: 42, max: 42, mean: 42, median: 42, standardDeviation: 0 });
    expect(s.histogram.map((h: any) => h.frequency)).toEqual([3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('draws one sample per request for rows, total and statistics', async () => {
    const values: number[] = [];
    for (let i = 0; i < 200; i++) values.push(i * 7);
    await t.db.query(
      `INSERT INTO "ArchiverWarning" ("OccurredDate", "EntityAnalysisModelGuid", "StageId", "DurationMicroseconds", "CreatedDate")
       SELECT $1, gen_random_uuid(), 1, v, $1 FROM unnest($2::bigint[]) v`,
      [new Date(now() - 5 * MINUTE), values],
    );
    const none = await get('/api/ArchiverWarning?samplePercentage=0');
    expect(none.json.rows).toEqual([]);
    expect(none.json.total).toBe(0);
    expect(none.json.statistics.durationMicroseconds.histogram).toEqual([]);
    const all = await get('/api/ArchiverWarning?samplePercentage=100');
    expect(all.json.total).toBe(200);

    const half = await get('/api/ArchiverWarning?samplePercentage=50');
    const { rows, total, statistics } = half.json;
    expect(total).toBeGreaterThan(40);
    expect(total).toBeLessThan(160);
    expect(rows.length).toBe(total);
    // The statistics describe exactly the sampled rows that came back.
    const e = referenceStatistics(rows.map((r: any) => r.durationMicroseconds));
    const s = statistics.durationMicroseconds;
    expect(s.histogram.reduce((a: number, h: any) => a + h.frequency, 0)).toBe(total);
    expect(s.min).toBe(e.min);
    expect(s.max).toBe(e.max);
    expect(s.mean).toBeCloseTo(e.mean, 6);
    expect(s.median).toBeCloseTo(e.median, 6);

    const paged = await get('/api/ArchiverWarning?samplePercentage=50&take=10');
    expect(paged.json.rows.length).toBeLessThanOrEqual(paged.json.total);
  });

  it('searches CaseCreationWarning case-insensitively and exports CSV with the formula guard', async () => {
    const created = new Date(now() - 2 * MINUTE);
    for (const [value, stage, destination] of [
      ['=cmd()', 3, 'mailto:ops@example.com'],
      ['ACCOUNT-42', 1, null],
      ['other', 4, 'https://hooks.example.com/a,b'],
    ] as const) {
      await t.db.query(
        `INSERT INTO "CaseCreationWarning" ("OccurredDate", "CaseWorkflowGuid", "CaseWorkflowName", "CaseKey", "CaseKeyValue", "StageId",
                                            "Destination", "DurationMicroseconds", "CreatedDate", "Instance")
         VALUES ($1, $2, 'Fraud cases', 'AccountId', $3, $4, $5, 15000000, $1, 'node-a')`,
        [created, randomUUID(), value, stage, destination],
      );
    }
    const search = await get('/api/CaseCreationWarning?search=account-4');
    expect(search.json.total).toBe(1);
    expect(search.json.rows[0]).toMatchObject({ caseKeyValue: 'ACCOUNT-42', stageName: 'ExistingCasePriorityLookup' });
    const percent = await get('/api/CaseCreationWarning?search=%25');
    expect(percent.json.total).toBe(0);

    const csv = await get('/api/CaseCreationWarning?format=csv&sortField=caseKeyValue&sortDirection=asc');
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    const json = await get('/api/CaseCreationWarning?sortField=caseKeyValue&sortDirection=asc');
    expect(lines[0]).toBe(Object.keys(json.json.rows[0]).join(','));
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain(",'=cmd(),");
    expect(lines.some((l) => l.includes('"https://hooks.example.com/a,b"'))).toBe(true);

    const byAccept = await get('/api/CaseCreationWarning', { accept: 'text/csv' });
    expect(byAccept.headers.get('content-type')).toMatch(/text\/csv/);
    expect(byAccept.text.split('\r\n')[0]).toBe(lines[0]);
  });

  it('reads ModelInvokeWarning by OccurredDate, with model filter and search over model name and message', async () => {
    const model = randomUUID();
    const insert = (minutesAgo: number, guid: string, name: string, message: string, since: number) =>
      t.db.query(
        `INSERT INTO "ModelInvokeWarning" ("OccurredDate", "EntityAnalysisModelGuid", "EntityAnalysisModelName", "EntityAnalysisModelInstanceEntryGuid",
                                           "Message", "ElapsedMicroseconds", "SinceLastEntryMicroseconds", "CreatedDate")
         VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`,
        [new Date(now() - minutesAgo * MINUTE), guid, name, randomUUID(), message, since, new Date(now() - 3 * 60 * MINUTE)],
      );
    await insert(5, model, 'Card Fraud', 'Abstraction rules done', 2000);
    await insert(6, randomUUID(), 'AML', 'Sanctions FUZZY match', 4000);
    await insert(70, model, 'Card Fraud', 'too old', 1);
    const all = await get('/api/ModelInvokeWarning');
    expect(all.json.total).toBe(2);
    expect(all.json.statistics.sinceLastEntryMicroseconds).toMatchObject({ min: 2000, max: 4000, mean: 3000 });
    expect(Object.keys(all.json.statistics)).toEqual(['elapsedMicroseconds', 'sinceLastEntryMicroseconds']);
    expect((await get(`/api/ModelInvokeWarning?entityAnalysisModelGuid=${model.toUpperCase()}`)).json.total).toBe(1);
    expect((await get('/api/ModelInvokeWarning?search=fuzzy')).json.rows[0].entityAnalysisModelName).toBe('AML');
    expect((await get('/api/ModelInvokeWarning?search=card')).json.rows[0].message).toBe('Abstraction rules done');
  });

  it('reads CaptureQueueHealth with queue names, a queueId filter and statistics of depth and drops', async () => {
    for (const [queueId, depth, dropped] of [
      [1, 0, 0],
      [3, 20000, 15],
      [3, 10, 0],
    ]) {
      await t.db.query(`INSERT INTO "CaptureQueueHealth" ("QueueId", "QueueDepth", "DroppedCount", "CreatedDate") VALUES ($1, $2, $3, $4)`, [
        queueId,
        depth,
        dropped,
        new Date(now() - MINUTE),
      ]);
    }
    const res = await get('/api/CaptureQueueHealth?queueId=3');
    expect(res.json.total).toBe(2);
    expect(res.json.rows[0]).toMatchObject({ queueId: 3, queueName: 'ArchiverWarning' });
    expect(Object.keys(res.json.rows[0])).toEqual(['id', 'queueId', 'queueName', 'queueDepth', 'droppedCount', 'createdDate', 'instance']);
    expect(res.json.statistics.queueDepth).toMatchObject({ min: 10, max: 20000, mean: 10005 });
    expect(res.json.statistics.droppedCount).toMatchObject({ min: 0, max: 15 });
  });

  it('refuses every telemetry read to a non-landlord (403) and to an anonymous caller (401)', async () => {
    const tenant = await signInTenantAdministrator(t, 'tenant-admin', STRONG);
    const anonymous = new Browser(t.url);
    for (const path of CONTRACT_TELEMETRY_TABLES) {
      expect((await tenant.get(`/api/${path}`)).status).toBe(403);
      expect((await tenant.get(`/api/${path}?format=csv`)).status).toBe(403);
      expect((await anonymous.get(`/api/${path}`)).status).toBe(401);
      const landlord = await get(`/api/${path}`);
      expect(landlord.status).toBe(200);
      expect(landlord.json.total).toBeGreaterThanOrEqual(0);
    }
  });
});
