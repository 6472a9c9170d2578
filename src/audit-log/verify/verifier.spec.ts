import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeAuditLog } from '../../../test/helpers/audit-fake-log';
import { leafRecord, sha256 } from '../canonical';
import { leafHash } from '../merkle';
import { run } from './main';

/** Runs the command as a user would, collecting its output lines and exit code. */
async function verify(log: FakeAuditLog, ...extra: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(['--url', log.url, '--api-key', log.apiKey, ...extra], (l) => out.push(l), (l) => err.push(l));
  return { code, out, err };
}

/** A log of 3 checkpoints after the empty one: 4 rows, then 3, then 5 (one a logout). */
function buildLog(): FakeAuditLog {
  const log = new FakeAuditLog();
  for (let i = 0; i < 4; i++) log.login(`user${i}`, `2026-10-0${i + 1}T10:00:00.00000${i}Z`);
  log.seal();
  for (let i = 0; i < 3; i++) log.login(`user${i}`, `2026-11-0${i + 1}T10:00:00.123456Z`);
  log.seal();
  log.logout('user1', '2026-11-20T10:00:00.000000Z');
  for (let i = 0; i < 4; i++) log.login(`late${i}`, `2026-11-2${i}T11:00:00.000000Z`);
  log.seal();
  return log;
}

describe('npm run audit:verify against a log served over HTTP', () => {
  let log: FakeAuditLog;
  let dir: string;
  beforeEach(async () => {
    log = buildLog();
    await log.listen();
    dir = mkdtempSync(join(tmpdir(), 'audit-verify-'));
  });
  afterEach(async () => {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes an untouched log with the summary line, with the given or the served key', async () => {
    const given = await verify(log, '--verifier-key', log.verifierKey);
    expect(given).toEqual({ code: 0, out: ['verified 12 leaves, 4 checkpoints, 0 removed by retention'], err: [] });
    const served = await verify(log);
    expect(served.code).toBe(0);
    expect(served.out[0]).toMatch(/no --verifier-key given: trusting the served key/);
    expect(served.out.at(-1)).toBe('verified 12 leaves, 4 checkpoints, 0 removed by retention');
  });

  it('names the first changed row', async () => {
    const changed = JSON.parse(log.leaves[5].canonical!) as unknown[];
    changed[changed.length - 1] = 'x';
    log.setCanonical(5, JSON.stringify(changed));
    log.setCanonical(9, null);
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toBe(`FAILED: leaf 5 (UserLogin ${log.leaves[5].rowId}): row changed (its canonical form no longer hashes to the sealed row hash)`);
  });

  it('names a deleted row that no retention run covers', async () => {
    log.setCanonical(7, null);
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toMatch(new RegExp(`^FAILED: leaf 7 \\(UserLogout ${log.leaves[7].rowId}\\): row missing, and no sealed retention run of UserLogout covers`));
  });

  it('counts rows removed by a sealed retention run whose cutoff is later than their date, and only those', async () => {
    log.retentionRun('UserLogin', '2026-11-01T00:00:00.000000Z', '2026-12-05T00:00:00.000000Z');
    log.seal();
    for (let i = 0; i < 4; i++) log.setCanonical(i, null);
    const ok = await verify(log, '--verifier-key', log.verifierKey);
    expect(ok.code).toBe(0);
    expect(ok.out).toContain(`retention run ${log.runs[0].id} (UserLogin, cutoff 2026-11-01T00:00:00.000000Z, sealed at leaf 12): 4 leaves removed by retention`);
    expect(ok.out.at(-1)).toBe('verified 13 leaves, 5 checkpoints, 4 removed by retention');
    // --retention d/30: the cutoff is 34 days before the run, so it still counts; d/60 asks for more.
    expect((await verify(log, '--verifier-key', log.verifierKey, '--retention', 'd/30')).code).toBe(0);
    const strict = await verify(log, '--verifier-key', log.verifierKey, '--retention', 'd/60');
    expect(strict.code).toBe(1);
    expect(strict.out.at(-1)).toMatch(/^FAILED: leaf 0 \(UserLogin 1\): row missing, and no sealed retention run of UserLogin covers/);
    // A row dated after the cutoff is not covered.
    log.setCanonical(4, null);
    const after = await verify(log, '--verifier-key', log.verifierKey);
    expect(after.code).toBe(1);
    expect(after.out.at(-1)).toMatch(/^FAILED: leaf 4 \(UserLogin 5\): row missing/);
  });

  it('does not count a retention run sealed before the leaf, nor one of the other table, nor an unsealed one', async () => {
    const early = new FakeAuditLog();
    early.retentionRun('UserLogin', '2027-01-01T00:00:00.000000Z', '2027-02-01T00:00:00.000000Z');
    early.seal();
    early.login('a', '2026-10-01T00:00:00.000000Z');
    early.retentionRun('UserLogout', '2027-01-01T00:00:00.000000Z', '2027-02-01T00:00:00.000000Z');
    early.seal();
    early.retentionRun('UserLogin', '2027-01-01T00:00:00.000000Z', '2027-02-01T00:00:00.000000Z');
    // That last run is written but never sealed.
    early.setCanonical(1, null);
    await early.listen();
    try {
      const result = await verify(early, '--verifier-key', early.verifierKey);
      expect(result.code).toBe(1);
      expect(result.out).toContain(`retention run ${early.runs[2].id}: not sealed in checkpoint 3, not counted`);
      expect(result.out.at(-1)).toMatch(/^FAILED: leaf 1 \(UserLogin 2\): row missing/);
    } finally {
      await early.close();
    }
  });

  it('names two swapped leaves as reordered', async () => {
    const [a, b] = [log.leaves[8], log.leaves[10]];
    log.leaves[8] = { ...b, leafIndex: 8 };
    log.leaves[10] = { ...a, leafIndex: 10 };
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toBe(`FAILED: leaf 8 (UserLogin ${b.rowId}): leaves reordered, it was signed at leaf 10, and leaf 10 (UserLogin ${a.rowId}) at leaf 8 (checkpoint 12)`);
  });

  it('names the first of two leaves swapped across checkpoints', async () => {
    const [a, b] = [log.leaves[2], log.leaves[9]];
    log.leaves[2] = { ...b, leafIndex: 2 };
    log.leaves[9] = { ...a, leafIndex: 9 };
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    // Checkpoint 4 never held the row now served at leaf 2, so no proof can say where it was.
    expect(result.out.at(-1)).toBe(`FAILED: leaf 2 (UserLogin ${b.rowId}): not the leaf checkpoint 4 signed at that index (leaf changed, or leaves reordered)`);
  });

  it('names a deleted leaf', async () => {
    log.leaves.splice(6, 1);
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toBe('FAILED: leaf 6: missing, the log jumps to leaf 7 (a leaf was deleted)');
  });

  it('names a changed leaf whose hashes were recomputed to match', async () => {
    const leaf = log.leaves[3];
    const row = JSON.parse(leaf.canonical!) as unknown[];
    row[3] = 'mallory';
    const canonical = Buffer.from(JSON.stringify(row));
    const rowHash = sha256(canonical);
    log.leaves[3] = {
      ...leaf,
      canonical: canonical.toString(),
      rowHash: rowHash.toString('base64'),
      leafHash: leafHash(leafRecord(leaf.table, leaf.rowId, leaf.rowCreatedDate, rowHash)).toString('base64'),
    };
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toBe(`FAILED: leaf 3 (UserLogin ${leaf.rowId}): not the leaf checkpoint 4 signed at that index (leaf changed, or leaves reordered)`);
  });

  it("names the service's stored tree when its proofs disagree with the signed leaves", async () => {
    // The leaves and checkpoints are intact; a stored perfect subtree (what proofs are built from) is not.
    log.stored.set('2/0', log.stored.get('2/1')!);
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toBe(
      "FAILED: checkpoint 12: the service's consistency proof from checkpoint 7 does not verify, though the leaves do (its stored tree nodes were changed)",
    );
  });

  it('names the run of leaves a changed leaf hides in when the service recomputes the lower proof levels', async () => {
    const rewrite = (index: number, user: string): void => {
      const leaf = log.leaves[index];
      const row = JSON.parse(leaf.canonical!) as unknown[];
      row[3] = user;
      const canonical = Buffer.from(JSON.stringify(row));
      const rowHash = sha256(canonical);
      log.leaves[index] = {
        ...leaf,
        canonical: canonical.toString(),
        rowHash: rowHash.toString('base64'),
        leafHash: leafHash(leafRecord(leaf.table, leaf.rowId, leaf.rowCreatedDate, rowHash)).toString('base64'),
      };
    };
    rewrite(9, 'mallory');
    // Proofs from hashes kept at sealing time single the leaf out.
    expect((await verify(log, '--verifier-key', log.verifierKey)).out.at(-1)).toBe(
      `FAILED: leaf 9 (UserLogin ${log.leaves[9].rowId}): not the leaf checkpoint 12 signed at that index (leaf changed, or leaves reordered)`,
    );
    // Proofs recomputed from today's leaves below level 4 cannot prove leaf 9's neighbours either.
    log.recomputedBelowLevel = 4;
    expect((await verify(log, '--verifier-key', log.verifierKey)).out.at(-1)).toBe(
      `FAILED: leaf 7 (UserLogout ${log.leaves[7].rowId}): the first of leaves 7 to 11, which checkpoint 12 does not prove (one or more of them changed with their hashes rewritten, or reordered; the service keeps no finer signed hash)`,
    );
  });

  it('names a checkpoint whose root was replaced, or whose signature fails', async () => {
    const original = { ...log.checkpoints[2] };
    log.checkpoints[2].rootHash = log.checkpoints[3].rootHash;
    let result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toMatch(/^FAILED: checkpoint 7: root replaced/);

    log.checkpoints[2] = { ...original, note: original.note.replace(original.rootHash, log.checkpoints[3].rootHash), rootHash: log.checkpoints[3].rootHash };
    result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toMatch(/^FAILED: checkpoint 7: signature fails \(note: the signature of .* does not verify\)/);

    // A log re-signed with another key fails against the key given, and is reported as served.
    log.checkpoints[2] = original;
    const other = new FakeAuditLog();
    const result2 = await verify(log, '--verifier-key', other.verifierKey);
    expect(result2.code).toBe(1);
    expect(result2.out[0]).toMatch(/^the service serves verifier key .*, not the one given/);
    expect(result2.out.at(-1)).toMatch(/^FAILED: checkpoint 12: signature fails \(note: not signed by/);
  });

  it('with --known, saves the latest note and catches a history cut back or rewritten', async () => {
    const known = join(dir, 'known-notes');
    const first = await verify(log, '--verifier-key', log.verifierKey, '--known', known);
    expect(first.code).toBe(0);
    expect(first.out).toContain(`saved checkpoint 12 to ${known}`);
    expect(readFileSync(known, 'utf8')).toBe(log.checkpoints[3].note);
    expect(statSync(known).mode & 0o777).toBe(0o600);

    log.login('next', '2026-11-30T00:00:00.000000Z');
    log.seal();
    expect((await verify(log, '--verifier-key', log.verifierKey, '--known', known)).code).toBe(0);
    const savedNotes = log.checkpoints[3].note + log.checkpoints[4].note;
    expect(readFileSync(known, 'utf8')).toBe(savedNotes);
    // Unchanged log: nothing appended twice.
    expect((await verify(log, '--verifier-key', log.verifierKey, '--known', known)).out).not.toContain(`saved checkpoint 13 to ${known}`);

    // Cut back to checkpoint 7: the rows of leaves 7.. re-sealed in another order, re-signed with the key.
    const cut = new FakeAuditLog();
    Object.assign(cut, { privateKey: log.privateKey });
    cut.checkpoints = [];
    for (let i = 0; i < 4; i++) cut.login(`user${i}`, `2026-10-0${i + 1}T10:00:00.00000${i}Z`);
    for (let i = 0; i < 3; i++) cut.login(`user${i}`, `2026-11-0${i + 1}T10:00:00.123456Z`);
    cut.seal();
    await log.close();
    await cut.listen();
    log = cut;
    const rolledBack = await verify(cut, '--verifier-key', cut.verifierKey, '--known', known);
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.out.at(-1)).toBe(`FAILED: history rolled back: ${known} holds checkpoint 12, signed earlier, but the latest checkpoint now has 7 leaves`);

    for (let i = 0; i < 6; i++) cut.login(`forged${i}`, `2026-11-2${i}T11:00:00.000000Z`);
    cut.seal();
    const rewritten = await verify(cut, '--verifier-key', cut.verifierKey, '--known', known);
    expect(rewritten.code).toBe(1);
    expect(rewritten.out.at(-1)).toMatch(new RegExp(`^FAILED: history rewritten: checkpoint 12 saved in ${known} has root .*, today's log has .* at that size$`));
    // Nothing is appended from a log that failed.
    expect(readFileSync(known, 'utf8')).toBe(savedNotes);
  });

  it('refuses a --known file holding a note the key did not sign', async () => {
    const known = join(dir, 'known-notes');
    writeFileSync(known, new FakeAuditLog().checkpoints[0].note);
    const result = await verify(log, '--verifier-key', log.verifierKey, '--known', known);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toMatch(/^FAILED: --known .*: saved note 1 does not verify with the trusted key/);
  });

  it('exits 2 with one clear line when the service cannot be asked or refuses the key', async () => {
    const refused = await run(['--url', log.url, '--api-key', 'wrong'], () => undefined, () => undefined);
    expect(refused).toBe(2);
    const err: string[] = [];
    expect(await run(['--url', log.url, '--api-key', 'wrong'], () => undefined, (l) => err.push(l))).toBe(2);
    expect(err).toEqual(['audit:verify: cannot verify: GET /api/Audit/PublicKey: HTTP 401 (Unauthorized: Key Not Found)']);

    // A port nobody listens on.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const closed: string[] = [];
    expect(await run(['--url', `http://127.0.0.1:${port}`, '--api-key', 'k'], () => undefined, (l) => closed.push(l))).toBe(2);
    expect(closed).toEqual(['audit:verify: cannot verify: GET /api/Audit/PublicKey: ECONNREFUSED']);

    const usage: string[] = [];
    expect(await run(['--url', log.url], () => undefined, (l) => usage.push(l))).toBe(2);
    expect(usage[0]).toBe('audit:verify: --api-key is required');
  });

  it('exits 1 naming the first row outside the log (contract 18)', async () => {
    log.outside = [
      { table: 'UserLogin', rowId: '77', createdDate: '2026-11-25T19:19:32.123456Z', canonical: '[]', reason: 'not-in-log' },
      { table: 'AdminChange', rowId: '5', createdDate: '2026-11-25T19:20:00.000000Z', canonical: '[]', reason: 'waiting' },
    ];
    const result = await verify(log, '--verifier-key', log.verifierKey);
    expect(result.code).toBe(1);
    expect(result.out.at(-1)).toMatch(/^FAILED: 2 rows outside the log; first: table UserLogin row 77 is outside the log/);
    expect(result.out).toContain('UserLogin row 77 (2026-11-25T19:19:32.123456Z) is outside the log: not-in-log');
  });
});
