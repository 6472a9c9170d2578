import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SinkDeliverer } from '../src/sinks/sink-deliverer.service';
import { startTestApp, TestApp } from './helpers/app';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { deliveryOrder, Rsyslog } from './helpers/sink-receivers';
import { signInAdministrator } from './helpers/users';
import { sealAllPending } from './helpers/sealing';

/** A CA and a server certificate for 127.0.0.1, made here with openssl, for rsyslog's TLS listener. */
function makeCertificates(): { caFile: string; certFile: string; keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tm-sink-tls-'));
  const at = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=sink test CA');
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', at('server.key'), '-out', at('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(at('ext.cnf'), 'subjectAltName=IP:127.0.0.1\n');
  run('x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-out', at('server.pem'), '-days', '2', '-extfile', at('ext.cnf'));
  return { caFile: at('ca.pem'), certFile: at('server.pem'), keyFile: at('server.key') };
}

/**
 * Syslog sinks (contract 19) against a real rsyslog started here with its own configuration (imtcp,
 * octet-counted framing, plain TCP and TLS), writing what it receives to a file this test reads:
 * RFC 5424 with the leaf's structured data, CEF and OCSF messages, and a receiver killed mid-delivery
 * and restarted (every leaf then arrives, in order, no gap).
 */
describe('syslog sinks against rsyslog (contract 19)', () => {
  let t: TestApp;
  let landlord: Browser;
  const certificates = makeCertificates();
  const plain = new Rsyslog();
  const tls = new Rsyslog({ tls: certificates });

  const sealAll = () => sealAllPending(t.app);
  const insertLogins = (count: number) =>
    t.db.query(
      `INSERT INTO "UserLogin" ("CreatedUser", "AuthenticationTypeId", "Failed", "FailureTypeId", "RemoteIp", "UserAgent")
       SELECT 'sys=' || g, 1, g % 5 = 0, CASE WHEN g % 5 = 0 THEN 5 END, '198.51.100.8', 'agent|' || g FROM generate_series(1, $1::int) g`,
      [count],
    );
  const treeSize = async () => (await landlord.get('/api/Audit/Checkpoint')).json.treeSize as number;

  beforeAll(async () => {
    t = await startTestApp({ env: { SecuritySinkCaFile: certificates.caFile, Instance: 'node-1' } });
    ({ browser: landlord } = await signInAdministrator(t));
    await plain.start();
    await tls.start();
  });
  afterAll(async () => {
    await plain.kill();
    await tls.kill();
    await t?.close();
  });

  it('CEF over TCP: RFC 5424 with the leaf as structured data, octet-counted; a receiver killed and restarted still gets every leaf in order', async () => {
    await sealAll();
    const start = await treeSize();
    const created = await landlord.post('/api/SecuritySink', { name: 'rsyslog', type: 'syslog', url: `syslog://127.0.0.1:${plain.port}`, format: 'cef', active: true });
    expect(created.status).toBe(201);
    const test = await landlord.post(`/api/SecuritySink/${created.json.id}/Test`);
    expect(test.json).toMatchObject({ delivered: true, status: null });
    // The first leaf the sink owes is its own creation (an AdminChange, contract 18 and 19); the logins start one later.
    await sealAll();
    const login = start + 1;
    await insertLogins(2000);
    await sealAll();
    await t.app.get(SinkDeliverer).claim();
    let size = await treeSize();
    await eventually(() => plain.leafIndexes().filter((i) => i >= start).length >= size - start);

    const lines = plain.lines();
    expect(lines[0]).toMatch(/^Test - CEF:0\|transaction-monitoring\|security\|0\.1\.0\|Test:0\|Test event\|1\|/);
    expect(lines.find((l) => l.includes(`index="${start}"`))).toMatch(/^AdminChange \[leaf@32473 .*\|AdminChange:15\|Administrative change\|5\|/);
    const first = lines.find((l) => l.includes(`index="${login}"`))!;
    const [leaf] = await t.db.query<{ hash: Buffer }>(`SELECT "LeafHash" AS hash FROM "AuditLeaf" WHERE "LeafIndex" = $1`, [login]);
    expect(first).toMatch(
      new RegExp(
        `^UserLogin \\[leaf@32473 index="${login}" hash="${leaf.hash.toString('base64').replace(/[+/]/g, (c) => `\\${c}`)}"\\] ?CEF:0\\|transaction-monitoring\\|security\\|0\\.1\\.0\\|UserLogin:0\\|Sign-in\\|3\\|rt=\\d+ suser=sys\\\\=1 src=198\\.51\\.100\\.8 requestClientApplication=agent\\|1 outcome=success cs1Label=leafIndex cs1=${login}$`,
      ),
    );
    expect(lines.some((l) => /\|UserLogin:5\|Sign-in\|7\|.* outcome=failure /.test(l))).toBe(true);

    // Killed (SIGKILL) while a backlog flows, then restarted on the same port: no leaf is missing.
    await insertLogins(20_000);
    await sealAll();
    await eventually(() => plain.leafIndexes().length > size - start + 100);
    await plain.kill();
    await insertLogins(1000);
    await sealAll();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    t.clock.advance(10_000);
    await plain.start();
    size = await treeSize();
    // Its backoff runs on the test's clock: move it until the sink is through.
    await eventually(async () => {
      t.clock.advance(60_000);
      const [row] = await t.db.query<{ next: number }>(`SELECT "NextLeafIndex"::int AS next FROM "SecuritySink" WHERE "Name" = 'rsyslog'`);
      return row.next >= size && new Set(plain.leafIndexes()).size >= size - start;
    }, 120_000, 500);
    const received = plain.leafIndexes().filter((i) => i >= start);
    expect(new Set(received).size).toBe(size - start);
    expect(deliveryOrder(received, start).jumps).toEqual([]);
  }, 240_000);

  it('OCSF over TLS (certificate verified against SecuritySinkCaFile); a listener without TLS is a failed Test', async () => {
    // The clock moved hours above: a fresh session.
    ({ browser: landlord } = await signInAdministrator(t));
    await sealAll();
    const start = await treeSize();
    const created = await landlord.post('/api/SecuritySink', { name: 'rsyslog-tls', type: 'syslog', url: `syslog+tls://127.0.0.1:${tls.port}`, format: 'ocsf', active: true });
    expect(created.status).toBe(201);
    // Its own creation is its first leaf (class 6003); the first login follows.
    await sealAll();
    const login = start + 1;
    await insertLogins(50);
    await sealAll();
    const size = await treeSize();
    await t.app.get(SinkDeliverer).claim();
    await eventually(() => tls.leafIndexes().filter((i) => i >= start).length >= size - start);
    const own = tls.lines().find((l) => l.includes(`index="${start}"`))!;
    expect(JSON.parse(own.slice(own.indexOf('] ') + 2))).toMatchObject({ class_uid: 6003, unmapped: { leafIndex: start }, metadata: { log_name: 'AdminChange' } });
    const line = tls.lines().find((l) => l.includes(`index="${login}"`))!;
    const json = JSON.parse(line.slice(line.indexOf('] ') + 2));
    expect(json).toMatchObject({ class_uid: 3002, activity_id: 1, unmapped: { leafIndex: login }, metadata: { log_name: 'UserLogin' } });

    // The plain listener does not speak TLS: the Test answers the failure, nothing is delivered.
    const wrong = await landlord.post('/api/SecuritySink', { name: 'not-tls', type: 'syslog', url: `syslog+tls://127.0.0.1:${plain.port}`, format: 'ocsf', active: false });
    const test = await landlord.post(`/api/SecuritySink/${wrong.json.id}/Test`);
    expect(test.json.delivered).toBe(false);
  }, 120_000);
});
