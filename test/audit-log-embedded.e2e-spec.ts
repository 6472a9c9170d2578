import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../src/bootstrap';
import { AuditSealer } from '../src/audit-log/audit-sealer.service';
import { verifyConsistency, verifyInclusion } from '../src/audit-log/merkle';
import { parseCheckpoint } from '../src/audit-log/note';
import { AUDIT_SIGNING_KEY_FILE, resolveSecrets } from '../src/config/secrets';
import { loadSettings } from '../src/config/settings';
import { eventually } from './helpers/eventually';
import { Browser } from './helpers/http';
import { firstAdministratorSignIn } from './helpers/users';
import { fromBase64 } from './helpers/audit-reference';

const ADMIN_PASSWORD = 'Embedded-Adm1n-Pass';

/**
 * The audit log on the embedded default (PGlite, no ConnectionString, no AuditSigningKey): the
 * signing key generated at first start and kept in DataDirectory (0600), the same across a restart;
 * the size-0 checkpoint; sign-ins sealed into leaves whose proofs verify against the signed root.
 */
describe('tamper-evident audit log on the embedded database', () => {
  const boot = async (dataDirectory: string) => {
    const settings = resolveSecrets(loadSettings({ DataDirectory: dataDirectory, LogLevel: 'error' }));
    const app = await createApp(settings, { logger: ['error'] });
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}` };
  };

  it('generates and keeps the signing key, seals sign-ins, serves proofs that verify', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'tm-embedded-audit-'));
    const first = await boot(dataDirectory);
    let verifier: string;
    try {
      const keyFile = join(dataDirectory, AUDIT_SIGNING_KEY_FILE);
      const stat = lstatSync(keyFile);
      expect(stat.isFile()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o600);
      expect(readFileSync(keyFile, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);

      const browser = new Browser(first.url);
      const signIn = await firstAdministratorSignIn(browser, ADMIN_PASSWORD);
      expect(signIn.status).toBe(200);
      const key = (await browser.get('/api/Audit/PublicKey')).json;
      verifier = key.verifierKey;
      expect(key.origin).toMatch(/^transaction-monitoring\/audit\/\d+$/);
      const zero = (await browser.get('/api/Audit/Checkpoint?treeSize=0')).json;
      expect(fromBase64(zero.rootHash)).toEqual(createHash('sha256').digest());
      expect(parseCheckpoint(zero.note, verifier).treeSize).toBe(0);

      // The sign-in rows so far become leaves.
      const rows = (await browser.get('/api/UserLogin?sortField=id&sortDirection=asc')).json.total as number;
      expect(rows).toBeGreaterThan(0);
      await eventually(async () => (await browser.get('/api/Audit/Checkpoint')).json.treeSize >= rows);
      const latest = (await browser.get('/api/Audit/Checkpoint')).json;
      expect(parseCheckpoint(latest.note, verifier)).toEqual({ origin: key.origin, treeSize: latest.treeSize, rootHash: fromBase64(latest.rootHash) });
      const leaves = (await browser.get(`/api/Audit/Leaves?start=0&end=${latest.treeSize}`)).json;
      expect(leaves.map((l: any) => l.leafIndex)).toEqual(leaves.map((_: unknown, i: number) => i));
      expect(leaves.filter((l: any) => l.table === 'UserLogin')).toHaveLength(rows);
      for (const leaf of leaves) {
        const proof = (await browser.get(`/api/Audit/Proof?table=${leaf.table}&id=${leaf.rowId}`)).json;
        expect(proof.leafIndex).toBe(leaf.leafIndex);
        expect(createHash('sha256').update(proof.canonical).digest()).toEqual(fromBase64(leaf.rowHash));
        expect(verifyInclusion(proof.leafIndex, latest.treeSize, fromBase64(proof.leafHash), proof.auditPath.map(fromBase64), fromBase64(latest.rootHash))).toBe(true);
      }
      const consistency = (await browser.get(`/api/Audit/Consistency?first=0&second=${latest.treeSize}`)).json;
      expect(verifyConsistency(0, latest.treeSize, fromBase64(zero.rootHash), fromBase64(latest.rootHash), consistency.proof.map(fromBase64))).toBe(true);
    } finally {
      await first.app.close();
    }

    // A restart signs with the kept key: the next checkpoints verify with the same verifier key.
    const second = await boot(dataDirectory);
    try {
      const browser = new Browser(second.url);
      expect((await browser.post('/api/Authentication/ByUserNamePassword', { userName: 'Administrator', password: ADMIN_PASSWORD })).status).toBe(200);
      expect((await browser.get('/api/Audit/PublicKey')).json.verifierKey).toBe(verifier);
      await second.app.get(AuditSealer).sealPending();
      const [before, after] = (await browser.get('/api/Audit/Checkpoints?from=1')).json.slice(-2);
      expect(after.treeSize).toBeGreaterThan(before.treeSize);
      expect(parseCheckpoint(after.note, verifier).treeSize).toBe(after.treeSize);
      const proof = (await browser.get(`/api/Audit/Consistency?first=${before.treeSize}&second=${after.treeSize}`)).json.proof.map(fromBase64);
      expect(verifyConsistency(before.treeSize, after.treeSize, fromBase64(before.rootHash), fromBase64(after.rootHash), proof)).toBe(true);
    } finally {
      await second.app.close();
    }
  }, 120_000);
});
