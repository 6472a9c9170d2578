import { CompactRange, EMPTY_ROOT, verifyConsistency, verifyInclusion } from '../merkle';
import { parseCheckpoint, parseVerifierKey, verifierKey as formatVerifierKey } from '../note';
import type { VerifyOptions } from './args';
import { CHECKPOINTS_PAGE, LEAVES_PAGE } from '../pages';
import { AuditClient, type ServedCheckpoint, type ServedLeaf } from './client';
import { TransportError, VerificationFailure } from './errors';
import { appendKnown, readKnown } from './known';
import { checkLeaf, nameLeaf, type CheckedLeaf } from './leaf-checks';
import { coveringRun, provenRun, type SealedRun } from './retention';

export interface VerifyResult {
  leaves: number;
  checkpoints: number;
  removedByRetention: number;
}

/** The summary line of contract 15. */
export function summaryLine(result: VerifyResult): string {
  return `verified ${result.leaves} leaves, ${result.checkpoints} checkpoints, ${result.removedByRetention} removed by retention`;
}

/** Windows this small are searched for a swapped pair; larger ones are located with inclusion proofs. */
const SWAP_SEARCH_MAX = 64;
/** At most this many inclusion proofs are asked for to locate the first bad leaf of a window. */
const PINPOINT_PROOFS_MAX = 2000;

const b64 = (value: string): Buffer => Buffer.from(value, 'base64');

/** A signed checkpoint, opened with the trusted key and matched against its own served fields. */
interface OpenedCheckpoint {
  treeSize: number;
  rootHash: Buffer;
  note: string;
}

/**
 * Verifies the audit log of one service over HTTP, on the caller's side (contract 15 "Verification,
 * by anyone"). `report` receives one line per finding. Throws VerificationFailure naming the first
 * bad leaf or checkpoint, TransportError when the service cannot be asked.
 */
export async function verifyAuditLog(options: VerifyOptions, report: (line: string) => void, client = new AuditClient(options.url, options.apiKey)): Promise<VerifyResult> {
  // 1. The key to trust, and the latest checkpoint's signature.
  const served = await client.publicKey();
  let trustedKey: string;
  if (options.verifierKey !== null) {
    try {
      parseVerifierKey(options.verifierKey);
    } catch (error) {
      throw new VerificationFailure(`--verifier-key: ${(error as Error).message}`);
    }
    trustedKey = options.verifierKey.trim();
    if (served.verifierKey !== trustedKey) report(`the service serves verifier key ${served.verifierKey}, not the one given: checking with the given key`);
  } else {
    trustedKey = served.verifierKey;
    let consistent = false;
    try {
      consistent = formatVerifierKey(served.origin, b64(served.publicKey)) === served.verifierKey && parseVerifierKey(served.verifierKey).keyId.toString('hex') === served.keyId;
    } catch {
      consistent = false;
    }
    if (!consistent) throw new VerificationFailure('the served public key, key id and verifier key do not agree with one another');
    report(`no --verifier-key given: trusting the served key ${served.verifierKey}; pass it with --verifier-key next time`);
  }

  const latestServed = await client.latestCheckpoint();
  const latest = openCheckpoint(latestServed, trustedKey);
  const treeSize = latest.treeSize;

  // 2. --known: every saved note must be signed by the trusted key and not beyond today's log.
  const known = options.known === null ? [] : readKnownNotes(options.known, trustedKey);
  for (const saved of known) {
    if (saved.treeSize > treeSize) {
      throw new VerificationFailure(
        `history rolled back: ${options.known} holds checkpoint ${saved.treeSize}, signed earlier, but the latest checkpoint now has ${treeSize} leaves`,
      );
    }
  }
  const knownBySize = new Map<number, OpenedCheckpoint[]>();
  for (const saved of known) knownBySize.set(saved.treeSize, [...(knownBySize.get(saved.treeSize) ?? []), saved]);

  // 3. Retention runs, each proven sealed in the latest checkpoint from its own leaf.
  const runs: SealedRun[] = [];
  for (const run of await client.retentionRuns()) {
    const proven = provenRun(run.id, await client.proof('AuditRetentionRun', run.id, treeSize), treeSize, latest.rootHash);
    if (typeof proven === 'string') report(proven);
    else runs.push(proven);
  }
  const removedPerRun = new Map<string, number>();

  // 4. Every leaf and every checkpoint, in leaf order: the first problem met is the first bad one.
  const range = new CompactRange(0, []);
  let lastVerified: { treeSize: number; edge: Buffer[]; root: Buffer } = { treeSize: 0, edge: [], root: EMPTY_ROOT };
  let checkpointsVerified = 0;
  let previousSize = -1;
  let previousCheckpoint: OpenedCheckpoint | null = null;
  let firstLeaf: CheckedLeaf | null = null;
  let lastLeaf: CheckedLeaf | null = null;
  const checkpoints = checkpointStream(client, treeSize);
  let next = await checkpoints.next();

  const verifyCheckpointsAt = async (size: number): Promise<void> => {
    const saved = knownBySize.get(size);
    if (saved) compareKnown(saved, size, range.root(), options.known);
    while (!next.done && next.value.treeSize <= size) {
      const served = next.value;
      if (served.treeSize <= previousSize) {
        throw new VerificationFailure(`checkpoint ${served.treeSize}: listed after checkpoint ${previousSize} (checkpoints reordered or duplicated)`);
      }
      if (served.treeSize < size) {
        // Only reachable if a checkpoint's size was skipped over, which the loop below never does.
        throw new VerificationFailure(`checkpoint ${served.treeSize}: not reached by the leaves`);
      }
      const opened = openCheckpoint(served, trustedKey);
      if (!range.root().equals(opened.rootHash)) await pinpoint(client, lastVerified, opened, report);
      if (opened.treeSize < treeSize) previousCheckpoint = opened;
      checkpointsVerified += 1;
      previousSize = served.treeSize;
      lastVerified = { treeSize: range.size, edge: [...range.edge], root: range.root() };
      next = await checkpoints.next();
    }
  };

  await verifyCheckpointsAt(0);
  let removed = 0;
  for (let start = 0; start < treeSize; start += LEAVES_PAGE) {
    const end = Math.min(treeSize, start + LEAVES_PAGE);
    const page = await client.leaves(start, end);
    for (let i = start; i < end; i++) {
      const servedLeaf: ServedLeaf | undefined = page[i - start];
      if (!servedLeaf) throw new VerificationFailure(`leaf ${i}: missing, the service answered only leaves ${start} to ${start + page.length - 1} of checkpoint ${treeSize} (leaves deleted)`);
      const leaf = expectOk(checkLeaf(servedLeaf, i));
      if (leaf.canonical === null) {
        const run = coveringRun(runs, leaf, options.retentionMs);
        if (!run) {
          throw new VerificationFailure(`${nameLeaf(i, leaf.table, leaf.rowId)}: row missing, and no sealed retention run of ${leaf.table} covers its date ${leaf.rowCreatedDate}`);
        }
        removed += 1;
        removedPerRun.set(run.id, (removedPerRun.get(run.id) ?? 0) + 1);
      }
      range.append(leaf.leafHash);
      firstLeaf ??= leaf;
      lastLeaf = leaf;
      await verifyCheckpointsAt(range.size);
    }
  }
  if (previousSize !== treeSize) throw new VerificationFailure(`checkpoint ${treeSize}: the latest checkpoint is missing from the list of checkpoints`);
  if (!range.root().equals(latest.rootHash)) throw new VerificationFailure(`checkpoint ${treeSize}: the latest checkpoint differs from the one listed at its size`);

  // 5. The proofs the service gives others must agree with the leaves just checked: consistency from
  // each saved note and from the previous checkpoint to the latest, inclusion of the first and last leaf.
  for (const saved of [...known, previousCheckpoint]) if (saved) await checkConsistency(client, saved.treeSize, saved.rootHash, latest);
  for (const leaf of new Map([firstLeaf, lastLeaf].filter((l) => l !== null).map((l) => [l.index, l])).values()) await checkInclusion(client, leaf, latest);
  for (const [id, count] of removedPerRun) {
    const run = runs.find((r) => r.id === id)!;
    report(`retention run ${id} (${run.tableName}, cutoff ${run.cutoff}, sealed at leaf ${run.leafIndex}): ${count} leaves removed by retention`);
  }

  // 5b. No row outside the log (contract 18): rows of the sealed tables that are no leaf and not (or too long) waiting.
  const outside = await client.outside();
  if (outside === null) {
    report('the service does not answer GET /api/Audit/Outside: rows outside the log were not checked');
  } else if (outside.total > 0) {
    for (const row of outside.rows.slice(0, 20)) report(`${row.table} row ${row.rowId} (${row.createdDate ?? 'no date'}) is outside the log: ${row.reason}`);
    const first = outside.rows[0];
    throw new VerificationFailure(
      `${outside.total} rows outside the log; first: table ${first?.table} row ${first?.rowId} is outside the log (${first?.reason}): not sealed in any checkpoint`,
    );
  }

  // 6. Today's latest note goes into the --known file for next time.
  if (options.known !== null && !known.some((k) => k.note === latest.note)) {
    appendKnown(options.known, latest.note);
    report(`saved checkpoint ${treeSize} to ${options.known}`);
  }
  return { leaves: treeSize, checkpoints: checkpointsVerified, removedByRetention: removed };
}

function expectOk(check: ReturnType<typeof checkLeaf>): CheckedLeaf {
  if (!check.ok) throw new VerificationFailure(check.problem);
  return check.leaf;
}

function openCheckpoint(served: ServedCheckpoint, trustedKey: string): OpenedCheckpoint {
  let parsed: ReturnType<typeof parseCheckpoint>;
  try {
    parsed = parseCheckpoint(served.note, trustedKey);
  } catch (error) {
    throw new VerificationFailure(`checkpoint ${served.treeSize}: signature fails (${(error as Error).message})`);
  }
  if (parsed.treeSize !== served.treeSize) throw new VerificationFailure(`checkpoint ${served.treeSize}: its signed note is for tree size ${parsed.treeSize}`);
  if (parsed.rootHash.toString('base64') !== served.rootHash) {
    throw new VerificationFailure(`checkpoint ${served.treeSize}: root replaced (the stored root hash ${served.rootHash} is not the signed ${parsed.rootHash.toString('base64')})`);
  }
  return { treeSize: parsed.treeSize, rootHash: parsed.rootHash, note: served.note };
}

function readKnownNotes(file: string, trustedKey: string): OpenedCheckpoint[] {
  let notes: string[];
  try {
    notes = readKnown(file);
  } catch (error) {
    throw new TransportError(`--known ${file}: ${(error as Error).message}`);
  }
  return notes.map((note, i) => {
    try {
      const { treeSize, rootHash } = parseCheckpoint(note, trustedKey);
      return { treeSize, rootHash, note };
    } catch (error) {
      throw new VerificationFailure(`--known ${file}: saved note ${i + 1} does not verify with the trusted key (${(error as Error).message})`);
    }
  });
}

function compareKnown(saved: OpenedCheckpoint[], size: number, root: Buffer, file: string | null): void {
  for (const k of saved) {
    if (!k.rootHash.equals(root)) {
      throw new VerificationFailure(
        `history rewritten: checkpoint ${size} saved in ${file} has root ${k.rootHash.toString('base64')}, today's log has ${root.toString('base64')} at that size`,
      );
    }
  }
}

/** Called once the leaves matched every signed root: a failing proof here means the service's stored tree nodes were changed. */
async function checkConsistency(client: AuditClient, first: number, firstRoot: Buffer, latest: OpenedCheckpoint): Promise<void> {
  if (first === 0 || first === latest.treeSize) return;
  const proof = (await client.consistency(first, latest.treeSize)).map(b64);
  if (!verifyConsistency(first, latest.treeSize, firstRoot, latest.rootHash, proof)) {
    throw new VerificationFailure(
      `checkpoint ${latest.treeSize}: the service's consistency proof from checkpoint ${first} does not verify, though the leaves do (its stored tree nodes were changed)`,
    );
  }
}

async function checkInclusion(client: AuditClient, leaf: CheckedLeaf, latest: OpenedCheckpoint): Promise<void> {
  const proof = await client.proof(leaf.table, leaf.rowId, latest.treeSize);
  const ok = proof !== null && proof.leafIndex === leaf.index && verifyInclusion(leaf.index, latest.treeSize, leaf.leafHash, proof.auditPath.map(b64), latest.rootHash);
  if (!ok) {
    throw new VerificationFailure(
      `${nameLeaf(leaf.index, leaf.table, leaf.rowId)}: the service's inclusion proof in checkpoint ${latest.treeSize} does not verify, though the leaves do (its stored tree nodes were changed)`,
    );
  }
}

/** Checkpoints of size ≤ limit, oldest first, a page at a time: never all of them in memory. */
async function* checkpointStream(client: AuditClient, limit: number): AsyncGenerator<ServedCheckpoint> {
  let from = 0;
  for (;;) {
    const page = await client.checkpoints(from);
    for (const c of page) {
      if (c.treeSize > limit) return;
      yield c;
    }
    if (page.length < CHECKPOINTS_PAGE) return;
    from = page[page.length - 1].treeSize + 1;
  }
}

/**
 * Throws naming two leaves whose exchange gives the signed root, if there are such. Both are taken
 * from `candidates` (the whole window by default); the window must be complete, from `first` on.
 */
function findSwap(
  window: readonly CheckedLeaf[],
  good: { treeSize: number; edge: Buffer[] },
  first: number,
  bad: OpenedCheckpoint,
  candidates: readonly CheckedLeaf[] = window,
): void {
  for (let i = 0; i < candidates.length; i++) {
    for (let j = i + 1; j < candidates.length; j++) {
      const [a, b] = [candidates[i], candidates[j]];
      const range = new CompactRange(first, [...good.edge]);
      for (const leaf of window) range.append((leaf === a ? b : leaf === b ? a : leaf).leafHash);
      if (range.root().equals(bad.rootHash)) {
        throw new VerificationFailure(
          `${nameLeaf(a.index, a.table, a.rowId)}: leaves reordered, it was signed at leaf ${b.index}, and ${nameLeaf(b.index, b.table, b.rowId)} at leaf ${a.index} (checkpoint ${bad.treeSize})`,
        );
      }
    }
  }
}

/**
 * A signed root does not match the leaves served since the last good checkpoint: find the first leaf
 * of that window that is not what was signed, and say what happened to it. Always throws.
 */
async function pinpoint(
  client: AuditClient,
  good: { treeSize: number; edge: Buffer[]; root: Buffer },
  bad: OpenedCheckpoint,
  report: (line: string) => void,
): Promise<never> {
  const first = good.treeSize;
  const window: CheckedLeaf[] = [];
  for (let start = first; start < bad.treeSize && window.length < Math.max(SWAP_SEARCH_MAX, PINPOINT_PROOFS_MAX); start += LEAVES_PAGE) {
    const page = await client.leaves(start, Math.min(bad.treeSize, start + LEAVES_PAGE));
    page.forEach((served, i) => {
      const check = checkLeaf(served, start + i);
      if (check.ok) window.push(check.leaf);
    });
  }
  const windowSize = bad.treeSize - first;
  if (windowSize === 1 && window.length === 1) {
    const leaf = window[0];
    throw new VerificationFailure(`${nameLeaf(leaf.index, leaf.table, leaf.rowId)}: not the leaf checkpoint ${bad.treeSize} signed at that index (leaf replaced, or leaves reordered)`);
  }
  // Two leaves swapped within the window: the only change that keeps every leaf valid by itself.
  if (windowSize <= SWAP_SEARCH_MAX && window.length === windowSize) findSwap(window, good, first, bad);

  // Otherwise ask the service for each leaf's inclusion proof in `bad`, checked against the signed root.
  // A proof that verifies proves its leaf; the first leaf none proves starts a run of unproven leaves.
  // How long that run is depends on the service: one whose proofs come from hashes kept at sealing time
  // proves every other leaf; one that recomputes the lower levels from the leaves it holds now cannot
  // prove the neighbours of a changed leaf either, and nothing signed is finer than what it keeps.
  const run: CheckedLeaf[] = [];
  for (const leaf of window.slice(0, PINPOINT_PROOFS_MAX)) {
    const proof = await client.proof(leaf.table, leaf.rowId, bad.treeSize);
    const proven =
      proof !== null &&
      proof.treeSize === bad.treeSize &&
      verifyInclusion(proof.leafIndex, bad.treeSize, leaf.leafHash, proof.auditPath.map(b64), bad.rootHash);
    if (proven && proof.leafIndex !== leaf.index) {
      throw new VerificationFailure(`${nameLeaf(leaf.index, leaf.table, leaf.rowId)}: leaves reordered, checkpoint ${bad.treeSize} signed this leaf at leaf ${proof.leafIndex}`);
    }
    if (!proven) run.push(leaf);
    else if (run.length > 0) break;
  }
  if (run.length > 0) {
    const [head, last] = [run[0], run[run.length - 1]];
    if (run.length === 1) {
      throw new VerificationFailure(`${nameLeaf(head.index, head.table, head.rowId)}: not the leaf checkpoint ${bad.treeSize} signed at that index (leaf changed, or leaves reordered)`);
    }
    if (run.length <= SWAP_SEARCH_MAX && window.length === windowSize && windowSize <= PINPOINT_PROOFS_MAX) findSwap(window, good, first, bad, run);
    throw new VerificationFailure(
      `${nameLeaf(head.index, head.table, head.rowId)}: the first of leaves ${head.index} to ${last.index}, which checkpoint ${bad.treeSize} does not prove (one or more of them changed with their hashes rewritten, or reordered; the service keeps no finer signed hash)`,
    );
  }
  report(`checkpoint ${bad.treeSize}: could not single out the bad leaf among leaves ${first} to ${bad.treeSize - 1}`);
  throw new VerificationFailure(
    `checkpoint ${bad.treeSize}: its signed root does not match leaves ${first} to ${bad.treeSize - 1} (leaves changed, reordered or removed, or the checkpoint's root replaced and re-signed)`,
  );
}
