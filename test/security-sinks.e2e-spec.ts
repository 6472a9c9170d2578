import { createHash } from 'node:crypto';
import { SinkDeliverer } from '../src/sinks/sink-deliverer.service';
import { requestWithoutCookies, createKey } from './helpers/api-keys';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { CapturedLogs } from './helpers/logs';
import { deliveryOrder, HttpReceiver } from './helpers/sink-receivers';
import { signInAdministrator, signInTenantAdministrator } from './helpers/users';
import { holdingSealLock, sealAllPending } from './helpers/sealing';

const SECRET = 'webhook-signing-key-0123456789';

/**
 * SIEM sinks (contract 19) through HTTP against PostgreSQL and a webhook receiver inside the test:
 * the routes (validation, secrets never served, state in every answer, replay), then delivery of
 * sealed leaves in order with signatures and checkpoints, through refusals, 500s, a hang past the
 * deadline, a connection closed mid-batch and a restart, with the backoff on the injected clock.
 */
describe('security sinks (contract 19)', () => {
  let t: TestApp;
  let logs: CapturedLogs;
  let landlord: Browser;
  const receiver = new HttpReceiver();

  const sealAll = () => sealAllPending(t.app);
  const insertLogins = (count: number, user = 'sink-user') =>
    t.db.query(
      `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "FailureTypeId", "RemoteIp", "UserAgent")
       SELECT $1 || g, 1, g % 7 = 0, CASE WHEN g % 7 = 0 THEN 5 END, '198.51.100.7', 'agent/' || g FROM generate_series(1, $2::int) g`,
      [user, count],
    );
  const treeSize = async () => (await landlord.get('/api/Audit/Checkpoint')).json.treeSize as number;
  /** The sink as its route answers; a GET that met a kept-alive connection the service had just closed is asked again. */
  const sink = async (id: number) => (await landlord.get(`/api/SecuritySink/${id}`).catch(() => landlord.get(`/api/SecuritySink/${id}`))).json;
  /**
   * Waits until the deliverer recorded its last failure at the clock's present time: its next attempt
   * is then due one backoff after now, and only then may the test move the clock. A delivery also sets
   * LastAttemptDate, and the clock stands still between tests, so the error must be there too: the
   * previous test's last delivery has the same instant (a CI run on a loaded machine read it first).
   */
  const failureRecorded = () =>
    eventually(async () => {
      const [row] = await t.db.query<{ at: Date | null; error: string | null }>(`SELECT "LastAttemptDate" AS at, "LastError" AS error FROM "SecuritySink" WHERE "Name" = 'hook'`);
      return row.at?.getTime() === t.clock.nowMs() && row.error !== null;
    });

  beforeAll(async () => {
    logs = new CapturedLogs();
    t = await startTestApp({ logger: logs });
    ({ browser: landlord } = await signInAdministrator(t));
    await receiver.start();
  });
  afterAll(async () => {
    await receiver.stop();
    await t?.close();
  });

  describe('routes', () => {
    it('refuses anonymous callers and names every bad field in one problem', async () => {
      const anonymous = new Browser(t.url);
      expect((await anonymous.get('/api/SecuritySink')).status).toBe(401);
      const res = await landlord.post('/api/SecuritySink', { name: '', type: 'webhook', url: 'http://siem.example/hook', format: 'cef', active: 'yes', other: 1 });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.json.errors.map((e: { field: string }) => e.field).sort()).toEqual(['active', 'format', 'name', 'other', 'secret', 'url']);
      const syslog = await landlord.post('/api/SecuritySink', { name: 's', type: 'syslog', url: 'syslog://127.0.0.1', format: 'cef', secret: 'x' });
      expect(syslog.status).toBe(400);
      expect(syslog.json.errors).toEqual([{ field: 'secret', message: expect.stringMatching(/only for syslog\+tls/) }]);
      expect((await landlord.post('/api/SecuritySink', 'not json', { 'content-type': 'application/json' })).status).toBe(400);
    });

    it('creates, serves the state, masks header values and never serves the secret; PUT keeps them; 409 on a name; DELETE', async () => {
      await sealAll();
      const size = await treeSize();
      const created = await landlord.post('/api/SecuritySink', {
        name: 'splunk',
        type: 'webhook',
        url: 'https://siem.example/services/collector',
        format: 'ocsf',
        secret: SECRET,
        headers: { Authorization: 'Splunk 1234-secret-token' },
        active: false,
      });
      expect(created.status).toBe(201);
      expect(created.text).not.toContain(SECRET);
      expect(created.text).not.toContain('1234-secret-token');
      expect(created.json).toMatchObject({
        name: 'splunk',
        type: 'webhook',
        format: 'ocsf',
        secretSet: true,
        headers: { Authorization: '****' },
        active: false,
        nextLeafIndex: size,
        behindLeaves: 0,
        behindSeconds: 0,
        lastDeliveredDate: null,
        lastError: null,
        failingSince: null,
        state: 'paused',
        createdUser: 'Administrator',
      });
      const [stored] = await t.db.query<{ Secret: string; Headers: string }>(`SELECT "Secret", "Headers" FROM "SecuritySink" WHERE "Id" = $1`, [created.json.id]);
      expect(stored.Secret).not.toContain(SECRET);
      expect(stored.Headers).not.toContain('1234-secret-token');
      expect((await landlord.post('/api/SecuritySink', { name: 'splunk', type: 'syslog', url: 'syslog://127.0.0.1:514', format: 'cef' })).status).toBe(409);

      const put = await landlord.put(`/api/SecuritySink/${created.json.id}`, {
        name: 'splunk-hec',
        type: 'webhook',
        url: 'https://siem.example/services/collector',
        format: 'ocsf',
        headers: { Authorization: '****', 'X-Env': 'prod' },
        active: false,
      });
      expect(put.status).toBe(200);
      expect(put.json).toMatchObject({ name: 'splunk-hec', secretSet: true, headers: { Authorization: '****', 'X-Env': '****' } });
      expect((await landlord.get('/api/SecuritySink')).json.map((s: { name: string }) => s.name)).toContain('splunk-hec');
      expect(logs.count('log', /^SinkChanged \(16\) SecuritySink \d+ "splunk-hec" by "Administrator": \{"headers":\[\{"Authorization":"\(secret\)"\},\{"Authorization":"\(secret\)","X-Env":"\(secret\)"\}\],"name":\["splunk","splunk-hec"\]\}$/)).toBe(1);
      expect(logs.lines.some((l) => l.message.includes('1234-secret-token') || l.message.includes(SECRET))).toBe(false);

      expect((await landlord.delete(`/api/SecuritySink/${created.json.id}`)).status).toBe(204);
      expect((await landlord.get(`/api/SecuritySink/${created.json.id}`)).status).toBe(404);
      expect((await landlord.delete(`/api/SecuritySink/${created.json.id}`)).status).toBe(404);
    });

    it('replay sets the cursor back; a value above it is a 400; startLeafIndex above the log is a 400', async () => {
      await sealAll();
      const size = await treeSize();
      // The sink's own AdminChange rows (created, replayed) are sealed only after the block: a seal between
      // the creation and the replay would move the log's size the replay answers against.
      await holdingSealLock(t.db.url, async () => {
        expect((await landlord.post('/api/SecuritySink', { name: 'late', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: false, startLeafIndex: size + 1 })).status).toBe(400);
        const created = (await landlord.post('/api/SecuritySink', { name: 'replayed', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: false })).json;
        expect(created.nextLeafIndex).toBe(size);
        const above = await landlord.post(`/api/SecuritySink/${created.id}/Replay`, { fromLeafIndex: size + 1 });
        expect(above.status).toBe(400);
        expect(above.json.errors).toEqual([{ field: 'fromLeafIndex', message: `at most ${size}` }]);
        expect((await landlord.post(`/api/SecuritySink/${created.id}/Replay`, { fromLeafIndex: -1 })).status).toBe(400);
        const replayed = await landlord.post(`/api/SecuritySink/${created.id}/Replay`, { fromLeafIndex: 0 });
        expect(replayed.status).toBe(200);
        expect(replayed.json).toMatchObject({ nextLeafIndex: 0, behindLeaves: size });
        expect(replayed.json.behindSeconds).toBeGreaterThanOrEqual(0);
        expect(logs.count('log', new RegExp(`^SinkReplayed \\(18\\) SecuritySink ${created.id} "replayed" by "Administrator": \\{"nextLeafIndex":\\[${size},0\\]\\}$`))).toBe(1);
        expect((await landlord.post('/api/SecuritySink/999999/Replay', { fromLeafIndex: 0 })).status).toBe(404);
        expect((await landlord.delete(`/api/SecuritySink/${created.id}`)).status).toBe(204);
      });
    });
  });

  describe('administrative changes (contract 18)', () => {
    const HEADER_VALUE = 'Splunk 9f1c-header-value';
    const NEW_HEADER_VALUE = 'Splunk 7e2d-header-value';
    const NEW_SECRET = 'another-signing-key-9876543210';
    /** The AdminChange rows of sink `id`, oldest first, as the read serves them, and their JSON text. */
    const changesOf = async (id: number) => {
      const res = await landlord.get(`/api/AdminChange?targetTable=SecuritySink&targetId=${id}&take=1000`);
      expect(res.status).toBe(200);
      return { rows: [...(res.json.rows as any[])].reverse(), text: res.text };
    };

    it('records create, change (header value and secret), replay and delete, with the actor, and never a secret or header value', async () => {
      await sealAll();
      const size = await treeSize();
      const [admin] = await t.db.query<{ Id: number }>(`SELECT "Id" FROM "UserRegistry" WHERE "Name" = 'Administrator'`);
      const key = await createKey(t, landlord, admin.Id, { name: 'sink-automation' });
      const body = { name: 'audited', type: 'webhook', url: 'https://siem.example/audited', format: 'ocsf', secret: SECRET, headers: { Authorization: HEADER_VALUE }, active: false };
      const created = await landlord.post('/api/SecuritySink', body);
      expect(created.status).toBe(201);
      const id = created.json.id as number;
      // A PUT that changes nothing, a 400 and a 404 write nothing.
      expect((await landlord.put(`/api/SecuritySink/${id}`, { ...body, secret: undefined, headers: { Authorization: '****' } })).status).toBe(200);
      expect((await landlord.put(`/api/SecuritySink/${id}`, { ...body, url: 'ftp://nowhere' })).status).toBe(400);
      expect((await landlord.post(`/api/SecuritySink/${id}/Replay`, { fromLeafIndex: size + 1 })).status).toBe(400);
      expect((await landlord.put('/api/SecuritySink/999999', body)).status).toBe(404);
      expect((await changesOf(999999)).rows).toEqual([]);
      const changed = await landlord.put(`/api/SecuritySink/${id}`, { ...body, name: 'audited-2', secret: NEW_SECRET, headers: { Authorization: NEW_HEADER_VALUE } });
      expect(changed.status).toBe(200);
      const replayed = await requestWithoutCookies(`${t.url}/api/SecuritySink/${id}/Replay`, 'POST', { 'x-api-key': key.apiKey }, { fromLeafIndex: 0 });
      expect(replayed.status).toBe(200);
      expect((await landlord.delete(`/api/SecuritySink/${id}`)).status).toBe(204);

      const { rows, text } = await changesOf(id);
      expect(rows.map((r) => [r.actionType, r.targetTable, r.targetId, r.targetName, r.failed, r.createdUser, r.credentialType])).toEqual([
        ['SinkCreated', 'SecuritySink', id, 'audited', false, 'Administrator', 'Cookie session'],
        ['SinkChanged', 'SecuritySink', id, 'audited-2', false, 'Administrator', 'Cookie session'],
        ['SinkReplayed', 'SecuritySink', id, 'audited-2', false, 'Administrator', 'API key'],
        ['SinkDeleted', 'SecuritySink', id, 'audited-2', false, 'Administrator', 'Cookie session'],
      ]);
      expect(rows[0].changes).toEqual({
        active: [null, false],
        format: [null, 'ocsf'],
        headers: [null, { Authorization: '(secret)' }],
        name: [null, 'audited'],
        nextLeafIndex: [null, size],
        secret: [null, '(secret)'],
        type: [null, 'webhook'],
        url: [null, 'https://siem.example/audited'],
      });
      expect(rows[1].changes).toEqual({ headers: [{ Authorization: '(secret)' }, { Authorization: '(secret)' }], name: ['audited', 'audited-2'], secret: ['(secret)', '(secret)'] });
      expect(rows[2].changes).toEqual({ nextLeafIndex: [size, 0] });
      expect(rows[3].changes).toMatchObject({ name: ['audited-2', null], secret: ['(secret)', null], headers: [{ Authorization: '(secret)' }, null], nextLeafIndex: [0, null] });
      // The actor's credential: the cookie session's sid for the browser, the key's display identifier for the key.
      expect(rows[0].credentialId).toMatch(/^[0-9a-f-]{36}$/);
      expect(rows.filter((r) => r.credentialType === 'Cookie session').map((r) => r.credentialId)).toEqual([rows[0].credentialId, rows[0].credentialId, rows[0].credentialId]);
      expect(rows[2].credentialId).toBe(key.apiKeyDisplay);

      // Neither secret nor any header value, in any sink row the read serves or the table holds.
      const every = await landlord.get('/api/AdminChange?targetTable=SecuritySink&take=1000');
      const stored = JSON.stringify(await t.db.query(`SELECT * FROM "AdminChange" WHERE "TargetTable" = 'SecuritySink'`));
      for (const whole of [text, every.text, stored]) {
        for (const secret of [SECRET, NEW_SECRET, HEADER_VALUE, NEW_HEADER_VALUE, '9f1c-header', '7e2d-header', '1234-secret-token', key.apiKey]) expect(whole).not.toContain(secret);
      }
    });

    it('records a refused write (403, not a landlord) as failed; the change and its row commit together or not at all', async () => {
      const created = (await landlord.post('/api/SecuritySink', { name: 'guarded', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: false })).json;
      const tenantAdmin = await signInTenantAdministrator(t, 'sink-tenant-admin', 'Tenant-Adm1n-Password!');
      expect((await tenantAdmin.put(`/api/SecuritySink/${created.id}`, { name: 'taken', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: true })).status).toBe(403);
      expect((await tenantAdmin.post(`/api/SecuritySink/${created.id}/Replay`, { fromLeafIndex: 0 })).status).toBe(403);
      expect((await tenantAdmin.delete(`/api/SecuritySink/${created.id}`)).status).toBe(403);
      expect((await tenantAdmin.post('/api/SecuritySink', { name: 'mine', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: true })).status).toBe(403);
      const refused = (await changesOf(created.id)).rows.filter((r) => r.failed);
      expect(refused.map((r) => [r.actionType, r.targetId, r.targetName, r.createdUser, r.changes])).toEqual([
        ['SinkChanged', created.id, null, 'sink-tenant-admin', {}],
        ['SinkReplayed', created.id, null, 'sink-tenant-admin', {}],
        ['SinkDeleted', created.id, null, 'sink-tenant-admin', {}],
      ]);
      const creations = await landlord.get('/api/AdminChange?targetTable=SecuritySink&failed=true&actionTypeId=15&take=1000');
      expect(creations.json.rows.map((r: any) => [r.targetId, r.createdUser])).toEqual([[null, 'sink-tenant-admin']]);
      expect((await landlord.get(`/api/SecuritySink/${created.id}`)).json).toMatchObject({ name: 'guarded', active: false });

      // An AdminChange row the database refuses takes the sink change down with it.
      await t.db.query(`CREATE FUNCTION sink_change_refused() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`);
      await t.db.query(`CREATE TRIGGER sink_change_refused BEFORE INSERT ON "AdminChange" FOR EACH ROW WHEN (NEW."TargetTable" = 'SecuritySink') EXECUTE FUNCTION sink_change_refused()`);
      try {
        expect((await landlord.post('/api/SecuritySink', { name: 'unrecorded', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: false })).status).toBeGreaterThanOrEqual(500);
        expect((await landlord.put(`/api/SecuritySink/${created.id}`, { name: 'renamed', type: 'syslog', url: 'syslog://127.0.0.1:1', format: 'cef', active: false })).status).toBeGreaterThanOrEqual(500);
        expect((await landlord.delete(`/api/SecuritySink/${created.id}`)).status).toBeGreaterThanOrEqual(500);
      } finally {
        await t.db.query(`DROP TRIGGER sink_change_refused ON "AdminChange"`);
        await t.db.query(`DROP FUNCTION sink_change_refused()`);
      }
      expect(await t.db.query(`SELECT "Name" FROM "SecuritySink" WHERE "Name" IN ('unrecorded', 'renamed')`)).toEqual([]);
      expect((await landlord.get(`/api/SecuritySink/${created.id}`)).json).toMatchObject({ name: 'guarded' });
      expect((await landlord.delete(`/api/SecuritySink/${created.id}`)).status).toBe(204);
    });
  });

  describe('webhook delivery', () => {
    let id: number;
    let start: number;

    it('Test sends one event outside the log and answers what the receiver said', async () => {
      // What the tests above wrote is sealed first: from `start` on, the log holds this sink's own creation, then the logins below.
      await sealAll();
      start = await treeSize();
      id = (await landlord.post('/api/SecuritySink', { name: 'hook', type: 'webhook', url: receiver.url, format: 'ocsf', secret: SECRET, headers: { Authorization: 'Bearer abc' }, active: false, startLeafIndex: start })).json.id;
      receiver.mode = 'error500';
      const failed = await landlord.post(`/api/SecuritySink/${id}/Test`);
      expect(failed.json).toEqual({ delivered: false, status: 500, detail: 'receiver failed' });
      receiver.mode = 'ok';
      const res = await landlord.post(`/api/SecuritySink/${id}/Test`);
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ delivered: true, status: 200, detail: 'ok' });
      const batch = receiver.batches[receiver.batches.length - 1];
      expect(HttpReceiver.verify(batch, SECRET)).toBe(true);
      expect(batch.headers.authorization).toBe('Bearer abc');
      expect(batch.events).toEqual([expect.objectContaining({ metadata: expect.objectContaining({ log_name: 'Test' }), unmapped: { test: true } })]);
      receiver.batches.length = 0;
      // Nothing of the log went: the sink is paused.
      expect((await sink(id)).nextLeafIndex).toBe(start);
    });

    it('delivers sealed leaves in order, signed, each with its leaf and the checkpoint that first covered it', async () => {
      await insertLogins(1200);
      await landlord.put(`/api/SecuritySink/${id}`, { name: 'hook', type: 'webhook', url: receiver.url, format: 'ocsf', active: true });
      // The activation is an AdminChange of its own: sealed with the logins before the size is read, so
      // the size is the whole log the sink must deliver (the background sealer could add it later).
      await sealAll();
      const size = await treeSize();
      await t.app.get(SinkDeliverer).claim();
      await eventually(async () => (await sink(id)).nextLeafIndex >= size);
      const state = await sink(id);
      expect(state).toMatchObject({ behindLeaves: 0, behindSeconds: 0, lastError: null, failingSince: null, state: 'delivering' });
      expect(state.lastDeliveredDate).not.toBeNull();
      const indexes = receiver.leafIndexes();
      expect(indexes.slice(0, size - start)).toEqual(Array.from({ length: size - start }, (_, i) => start + i));
      for (const batch of receiver.batches) {
        expect(batch.events.length).toBeLessThanOrEqual(500);
        expect(HttpReceiver.verify(batch, SECRET)).toBe(true);
        expect(batch.headers['content-type']).toBe('application/json');
        expect(Number(batch.headers['x-leaf-first'])).toBe(batch.events[0].unmapped.leafIndex);
        expect(Number(batch.headers['x-leaf-last'])).toBe(batch.events[batch.events.length - 1].unmapped.leafIndex);
      }
      // Each event proves itself: the leaf hash from its leaf record, the row hash from its canonical form, the root is a checkpoint's.
      const leaves = await t.db.query<{ i: number; hash: Buffer }>(`SELECT "LeafIndex"::int AS i, "LeafHash" AS hash FROM "AuditLeaf" WHERE "LeafIndex" >= $1 ORDER BY 1`, [start]);
      const checkpoints = new Map(
        (await t.db.query<{ size: number; root: Buffer }>(`SELECT "TreeSize"::int AS size, "RootHash" AS root FROM "AuditCheckpoint"`)).map((c) => [c.size, c.root.toString('base64')]),
      );
      const origin = (await landlord.get('/api/Audit/PublicKey')).json.origin;
      const events = receiver.batches.flatMap((b) => b.events);
      for (const event of events.slice(0, size - start)) {
        const u = event.unmapped;
        const record = Buffer.from(u.leafRecord, 'utf8');
        expect(createHash('sha256').update(Buffer.from([0])).update(record).digest('base64')).toBe(u.leafHash);
        expect(leaves[u.leafIndex - start].hash.toString('base64')).toBe(u.leafHash);
        expect(createHash('sha256').update(u.canonical).digest('base64')).toBe(u.leafRecord.split('\n')[3]);
        expect(checkpoints.get(u.treeSize)).toBe(u.rootHash);
        expect(u.treeSize).toBeGreaterThan(u.leafIndex);
        // The FIRST checkpoint covering it: none smaller is above the leaf.
        expect([...checkpoints.keys()].some((s) => s > u.leafIndex && s < u.treeSize)).toBe(false);
        expect(event.metadata.uid).toBe(`${origin}/${u.leafIndex}`);
        // The first leaf the sink owes is its own creation (contract 18 and 19: an AdminChange, class 6003); the logins follow,
        // with the sink's activation (the PUT above, another AdminChange) sealed among or after them.
        if (u.leafIndex === start) expect(event).toMatchObject({ class_uid: 6003, metadata: expect.objectContaining({ log_name: 'AdminChange' }) });
        else expect([3002, 6003]).toContain(event.class_uid);
      }
      const changes = events.slice(0, size - start).filter((e) => e.class_uid === 6003);
      expect(changes).toHaveLength(2);
      expect(changes.every((e) => e.metadata.log_name === 'AdminChange')).toBe(true);
      expect(events[0].unmapped.leafIndex).toBe(start);
      const failed = events.find((e) => e.status_id === 2);
      expect(failed).toMatchObject({ status_detail: 'Password did not match', severity_id: 3, user: { name: expect.stringMatching(/^sink-user/) } });
    });

    it('through refusal, 500, a hang past the deadline, a close mid-batch and a restart: every leaf in order, backoff 1 s doubling on the clock', async () => {
      const deliverer = t.app.get(SinkDeliverer);
      const from = (await sink(id)).nextLeafIndex;
      receiver.batches.length = 0;

      // 500: the first failure waits 1 s of the clock before the next attempt, the second 2 s.
      receiver.mode = 'error500';
      await insertLogins(700);
      await sealAll();
      await eventually(() => receiver.batches.length === 1);
      await failureRecorded();
      const failing = await sink(id);
      expect(failing).toMatchObject({ state: 'failing', nextLeafIndex: from, lastError: 'HTTP 500: receiver failed' });
      expect(failing.behindLeaves).toBeGreaterThanOrEqual(700);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.batches.length).toBe(1);
      t.clock.advance(1000);
      await eventually(() => receiver.batches.length === 2);
      await failureRecorded();
      t.clock.advance(1000);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(receiver.batches.length).toBe(2);
      t.clock.advance(1000);
      await eventually(() => receiver.batches.length === 3);
      await failureRecorded();

      // Refused: the receiver is down.
      await receiver.stop();
      t.clock.advance(4000);
      await eventually(async () => (await sink(id)).lastError !== 'HTTP 500: receiver failed');
      expect((await sink(id)).lastError).toMatch(/ECONNREFUSED/);
      await receiver.start();

      // Closed mid-batch, then a hang past the 10 s deadline.
      receiver.mode = 'close-mid-batch';
      t.clock.advance(8000);
      await eventually(async () => /socket hang up|ECONNRESET/.test((await sink(id)).lastError ?? ''));
      receiver.mode = 'hang';
      const before = receiver.batches.length;
      t.clock.advance(16_000);
      await eventually(() => receiver.batches.length > before);
      await eventually(async () => /no answer within 10 s/.test((await sink(id)).lastError ?? ''), 30_000);
      expect((await sink(id)).nextLeafIndex).toBe(from);

      // Back: once acknowledged, the backlog flows without waiting for the clock.
      receiver.mode = 'ok';
      t.clock.advance(32_000);
      const size = await treeSize();
      await eventually(async () => (await sink(id)).nextLeafIndex >= size);
      expect(await sink(id)).toMatchObject({ failingSince: null, lastError: null, behindLeaves: 0 });
      const acknowledged = receiver.batches.filter((b) => b.acknowledged).flatMap((b) => b.events.map((e) => e.unmapped.leafIndex));
      expect(acknowledged).toEqual(Array.from({ length: size - from }, (_, i) => from + i));
      const all = deliveryOrder(receiver.leafIndexes(), from);
      expect(all.jumps).toEqual([]);
      // Only the batch in flight came twice, identical each time.
      const firstBodies = new Map<string, string>();
      for (const batch of receiver.batches) {
        const key = `${batch.headers['x-leaf-first']}-${batch.headers['x-leaf-last']}`;
        if (firstBodies.has(key)) expect(batch.body).toBe(firstBodies.get(key));
        else firstBodies.set(key, batch.body);
      }
      expect(deliverer.delivering()).toContain(id);
    }, 120_000);

    it('a WARN after 15 minutes failing, then hourly; /health/ready stays 200', async () => {
      receiver.mode = 'error500';
      await insertLogins(3);
      await sealAll();
      await failureRecorded();
      expect((await new Browser(t.url).get('/health/ready')).status).toBe(200);
      const warns = () => logs.count('warn', /^security sink "hook" failing since /);
      expect(warns()).toBe(0);
      for (let i = 0; i < 6; i++) {
        const attempts = receiver.batches.length;
        t.clock.advance(5 * 60_000);
        await eventually(() => receiver.batches.length > attempts);
        await failureRecorded();
      }
      await eventually(() => warns() === 1);
      const attempts = receiver.batches.length;
      t.clock.advance(10 * 60_000);
      await eventually(() => receiver.batches.length > attempts);
      await failureRecorded();
      expect(warns()).toBe(1);
      for (let i = 0; i < 12; i++) {
        const n = receiver.batches.length;
        t.clock.advance(5 * 60_000);
        await eventually(() => receiver.batches.length > n);
        await failureRecorded();
      }
      await eventually(() => warns() === 2);
      expect((await new Browser(t.url).get('/health/ready')).status).toBe(200);
      receiver.mode = 'ok';
      t.clock.advance(5 * 60_000);
      // Two hours of the clock ended the administrator's session: a new one reads the state.
      ({ browser: landlord } = await signInAdministrator(t));
      await eventually(async () => (await sink(id)).failingSince === null);
    }, 120_000);
  });
});
