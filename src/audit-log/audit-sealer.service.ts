import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { ForegroundWork } from '../common/foreground-work';
import { AppSettings, SETTINGS } from '../config/config.module';
import { isDatabaseUnavailable } from '../database/deadlines';
import { CompactRange, EMPTY_ROOT } from './merkle';
import { parseCheckpoint } from './note';
import { SEAL_YIELD_SLICE_MS, sealYieldMs } from './audit-seal-pace';
import { AuditCheckpointRepository } from './audit-checkpoint.repository';
import { AppendedFromPending, AuditLeafRepository } from './audit-leaf.repository';
import { AuditPendingRepository } from './audit-pending.repository';
import { AuditSigner } from './audit-signer';
import { AuditTreeRepository, NewTreeNode } from './audit-tree.repository';
import { messageOf, PgErrorCode, pgErrorCode } from '../common/errors';

/** Key of the transaction advisory lock held by the one node sealing at a time. */
export const AUDIT_SEAL_LOCK_KEY = 7_206_310_519;
/**
 * Most rows sealed per transaction (and per checkpoint). Big enough that a burst of 100,000 rows is a
 * few transactions, small enough that each statement stays well inside the query deadline.
 */
export const AUDIT_SEAL_BATCH = 20_000;
/** The smallest batch: what the sealer falls back to when a batch's statements ran out of time. */
const MIN_SEAL_BATCH = 250;
/** Rows hashed between two turns of the event loop. */
const YIELD_EVERY = 1000;
/** Batches sealed one after the other in one run before the next interval. */
const MAX_BATCHES_PER_RUN = 50;

const NONE = Object.freeze({ count: 0, keys: [] as string[] });

export interface SealOutcome {
  /** False when another node holds the seal lock (it is sealing). */
  locked: boolean;
  sealed: number;
  /** Rows that were pending but could not become leaves (row gone, or already sealed). */
  skipped: number;
  /** Whether the batch was as big as allowed (more may wait). */
  full: boolean;
  treeSize: number | null;
  note: string | null;
}

/**
 * Seals waiting audit rows into the Merkle log (contract 15; docs/decisions/0019). One node at a
 * time cluster-wide (a transaction advisory lock, tried, never waited for), one transaction per
 * batch: one statement consumes the oldest pending entries and appends them as leaves from the next
 * index. Each entry already carries its row's hashes (canonical form, row hash, leaf record, leaf hash),
 * written by the enqueue trigger in the inserting transaction (docs/decisions/0039); an entry without
 * them has its row read and hashed by the statement. The leaf hashes come back and extend
 * the tree here, the perfect subtrees they complete are kept, the checkpoint is signed and written.
 * Either all of that commits or none of it. The insert path never waits for any of this: the trigger
 * only adds a pending entry, and nothing here locks the audit tables.
 */
@Injectable()
export class AuditSealer implements OnApplicationBootstrap {
  private readonly logger = new Logger('AuditLog');
  private running: Promise<SealOutcome[]> | null = null;
  private failing = false;
  /**
   * The batch size now: halved when a batch's statements passed the server's statement timeout (a
   * loaded database), doubled back after each full batch that went through, so a slow moment never
   * makes the sealer retry a batch that cannot fit for ever.
   */
  private batchSize = AUDIT_SEAL_BATCH;
  private warnedSigner = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly leaves: AuditLeafRepository,
    private readonly checkpoints: AuditCheckpointRepository,
    private readonly pending: AuditPendingRepository,
    private readonly tree: AuditTreeRepository,
    private readonly signer: AuditSigner,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly foreground: ForegroundWork,
  ) {}

  /** The size-0 checkpoint, written once whatever the number of nodes starting together. */
  async onApplicationBootstrap(): Promise<void> {
    const note = this.signer.sign(0, EMPTY_ROOT);
    if (await this.checkpoints.insert({ treeSize: 0, rootHash: EMPTY_ROOT, createdDate: this.clock.now(), note }, undefined, true)) {
      this.logNote(0, note);
    }
  }

  /**
   * Seals until nothing waits (or a bounded number of batches); one run at a time per node, a second
   * call joins the run in progress. Never throws: a failure is logged and the next interval retries.
   */
  sealPending(): Promise<SealOutcome[]> {
    if (this.running) return this.running;
    this.running = (async () => {
      const outcomes: SealOutcome[] = [];
      try {
        for (let i = 0; i < MAX_BATCHES_PER_RUN; i++) {
          const startedMs = this.clock.nowMs();
          const outcome = await this.sealBatch();
          outcomes.push(outcome);
          if (!outcome.locked || !outcome.full) break;
          // More waits: while sign-ins wait for the cores, give them back first (audit-seal-pace.ts).
          await this.yieldToForeground(this.clock.nowMs() - startedMs);
        }
        if (this.failing) this.logger.log('audit rows are sealed again');
        this.failing = false;
      } catch (error) {
        // Once per outage: the database's own warning already says it is unreachable.
        if (!isDatabaseUnavailable(error)) this.logger.error(`audit rows cannot be sealed: ${messageOf(error)}`);
        else if (!this.failing) this.logger.warn(`audit rows cannot be sealed until the database answers: ${messageOf(error)}`);
        this.failing = true;
      } finally {
        this.running = null;
      }
      return outcomes;
    })();
    return this.running;
  }

  /**
   * While sign-in work waits, gives the cores back for SEAL_YIELD_FACTOR times the last batch's time
   * (capped), asking again every slice: the pause ends as soon as nothing waits. With nothing waiting
   * it returns at once. Between transactions: the seal lock is not held meanwhile.
   */
  private async yieldToForeground(batchMs: number): Promise<void> {
    let remaining = sealYieldMs(batchMs, this.foreground.waiting());
    while (remaining > 0 && this.foreground.waiting()) {
      const slice = Math.min(remaining, SEAL_YIELD_SLICE_MS);
      await new Promise((resolve) => setTimeout(resolve, slice));
      remaining -= slice;
    }
  }

  /** One batch in one transaction (see the class comment). */
  async sealBatch(): Promise<SealOutcome> {
    const limit = this.batchSize;
    let outcome: SealOutcome;
    try {
      try {
        outcome = await this.sealBatchOf(limit, true);
      } catch (error) {
        // An exception in the batch (rare): a pending entry of a row that already has a leaf, or of an
        // Id naming two rows (the unique (TableName, RowId) refused the batch), of a row not sealable,
        // or of a row gone that the statement had to read (their NULL hashes or LeafIndex refused). The
        // batch rolled back whole; again, with the careful statement, which hashes the rows where they
        // are and skips, keeps one of and names each exception.
        const code = pgErrorCode(error);
        if (code !== PgErrorCode.UniqueViolation && code !== PgErrorCode.NotNullViolation) throw error;
        outcome = await this.sealBatchOf(limit, false);
      }
    } catch (error) {
      if (pgErrorCode(error) === PgErrorCode.QueryCanceled && limit > MIN_SEAL_BATCH) {
        this.batchSize = Math.max(MIN_SEAL_BATCH, Math.floor(limit / 2));
        this.logger.warn(`sealing ${limit} audit rows at once took longer than the statement timeout: ${this.batchSize} at a time now`);
      }
      throw error;
    }
    if (outcome.full && this.batchSize < AUDIT_SEAL_BATCH) this.batchSize = Math.min(AUDIT_SEAL_BATCH, this.batchSize * 2);
    return outcome;
  }

  /** `fast`: APPEND_FROM_PENDING_FAST_SQL, else the careful statement with its check of rows already sealed. */
  private async sealBatchOf(limit: number, fast: boolean): Promise<SealOutcome> {
    const outcome = await this.dataSource.transaction(async (tx): Promise<SealOutcome> => {
      // For this transaction only: room to sort a batch in memory rather than on disk (JIT is off for
      // every session of the service: database.module.ts).
      const [{ locked }] = (await tx.query(
        `SELECT pg_try_advisory_xact_lock($1) AS "locked", set_config('work_mem', '64MB', true)`,
        [AUDIT_SEAL_LOCK_KEY],
      )) as { locked: boolean }[];
      if (!locked) return { locked: false, sealed: 0, skipped: 0, full: false, treeSize: null, note: null };

      // The idle path (every interval on every node): one index probe, nothing else.
      if (!(await this.pending.any(tx))) return { locked: true, sealed: 0, skipped: 0, full: false, treeSize: null, note: null };

      // Where the log ends, from the table itself under the lock; it must be where the last checkpoint ends.
      const size = await this.leaves.size(tx);
      const latest = await this.checkpoints.latest(tx);
      const latestSize = latest?.treeSize ?? 0;
      if (latestSize !== size) throw new Error(`the audit log has ${size} leaves but its latest checkpoint ${latestSize}: refusing to seal`);
      const range = new CompactRange(size, await this.tree.edge(size, tx));
      // Never sign on top of a stored tree that no longer gives the signed root.
      if (!range.root().equals(latest?.rootHash ?? EMPTY_ROOT)) throw new Error(`the stored audit tree does not give the root of checkpoint ${size}: refusing to seal`);

      // The waiting entries become leaves (one statement); only the leaf hashes come back.
      const now = this.clock.now();
      let appended: AppendedFromPending;
      if (fast) {
        const quick = await this.leaves.appendFromPendingFast(tx, size, limit, now);
        appended = { ...quick, gone: NONE, repeated: NONE, unsealable: NONE, doubled: NONE };
      } else {
        appended = await this.leaves.appendFromPending(tx, size, limit, now, true);
      }
      if (appended.taken === 0) return { locked: true, sealed: 0, skipped: 0, full: false, treeSize: null, note: null };
      this.checkSigner(latest?.note ?? null);

      const nodes: NewTreeNode[] = [];
      const keep = (level: number, index: number, hash: Buffer) => nodes.push({ level, index, hash });
      const added = appended.leafHashes.length / 32;
      for (let start = 0; start < added; start += YIELD_EVERY) {
        // The tree's interior hashes are the one part left in the service: let requests in between.
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        range.appendAll(appended.leafHashes.subarray(start * 32, Math.min(added, start + YIELD_EVERY) * 32), keep, AuditTreeRepository.kept);
      }

      let note: string | null = null;
      if (added > 0) {
        await this.tree.append(tx, nodes);
        note = this.signer.sign(range.size, range.root());
        await this.checkpoints.insert({ treeSize: range.size, rootHash: range.root(), createdDate: now, note }, tx);
      }
      const { gone, repeated, unsealable, doubled } = appended;
      const list = (group: { count: number; keys: string[] }) => `${group.keys.join(', ')}${group.count > group.keys.length ? ', …' : ''}`;
      // A row deleted behind the triggers' back before it was sealed: nothing can seal it now; say so, loudly.
      if (gone.count > 0) this.logger.error(`${gone.count} audit rows were written but are gone before they could be sealed, and are not in the log: ${list(gone)}`);
      // A row no canonical form can hold (a negative Id, a date past year 9999, written by hand):
      // said loudly and left out, never a batch retried for ever behind it.
      if (unsealable.count > 0) {
        this.logger.error(`${unsealable.count} audit rows cannot be put in canonical form and are not in the log: ${list(unsealable)} (a negative Id, or a date that is infinite or outside years 0000-9999)`);
      }
      if (doubled.count > 0) this.logger.error(`${doubled.count} audit rows share their Id with another row of their table: only one of each can be sealed: ${list(doubled)}`);
      if (repeated.count > 0) this.logger.warn(`${repeated.count} audit rows were waiting to be sealed a second time and were sealed once: ${list(repeated)}`);
      const skipped = appended.taken - added;
      return { locked: true, sealed: added, skipped, full: appended.taken === limit, treeSize: range.size, note };
    });
    if (outcome.note !== null) this.logNote(outcome.treeSize!, outcome.note);
    return outcome;
  }

  /**
   * Says once when the latest checkpoint was signed with another key than this node's: nodes with
   * different AuditSigningKeys (each generated its own outside production) make the log fail
   * verification, which would look like tampering. A deliberate key change says the same once.
   */
  private checkSigner(note: string | null): void {
    if (note === null || this.warnedSigner) return;
    try {
      parseCheckpoint(note, this.signer.verifierKey);
    } catch {
      this.warnedSigner = true;
      this.logger.warn(
        'the latest audit checkpoint was not signed with this node\'s AuditSigningKey: every node must sign with the same key ' +
          '(set AuditSigningKey on each), or the key was changed (verify older checkpoints with the old verifier key)',
      );
    }
  }

  /** Every checkpoint also goes to the log as one INFO line (its note JSON-escaped), so log shipping keeps a copy. */
  private logNote(treeSize: number, note: string): void {
    this.logger.log(`audit checkpoint ${treeSize} ${JSON.stringify(note)}`);
  }

  get intervalMs(): number {
    return this.settings.auditSealIntervalMs;
  }
}

/** The SQLSTATE of a database error (TypeORM wraps the driver's). */
