import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { readFileSync } from 'node:fs';
import { DataSource, QueryRunner } from 'typeorm';
import { AuditSigner } from '../audit-log/audit-signer';
import { Clock } from '../common/clock';
import { ForegroundWork } from '../common/foreground-work';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SinkFeed } from './sink-feed';
import { SINK_YIELD_SLICE_MS, sinkYieldMs } from './sink-pace';
import { EventSource, SealedLeaf } from './sink-events';
import { sinkFormatName, sinkTypeName } from './sink-kinds';
import { SinkSecretBox } from './sink-secret';
import { OpenSink, senderFor, SinkSender } from './sink-sender';
import { SecuritySinkRepository, SinkRow } from './security-sink.repository';

/** Leaves per batch: a webhook POST holds at most this many events (contract 19). */
export const SINK_BATCH = 500;
/** First retry after a failure; doubled each time up to SINK_BACKOFF_MAX_MS (contract 19). */
export const SINK_BACKOFF_FIRST_MS = 1_000;
export const SINK_BACKOFF_MAX_MS = 5 * 60_000;
/** A sink failing this long logs a WARN, then again every SINK_WARN_EVERY_MS. */
export const SINK_WARN_AFTER_MS = 15 * 60_000;
export const SINK_WARN_EVERY_MS = 60 * 60_000;
/** How often each node looks for active sinks nobody delivers (and takes them). */
const CLAIM_EVERY_MS = 1_000;
/** How often a sink with nothing to send (or waiting out its backoff) looks again. */
const IDLE_POLL_MS = 100;
/** First key of the two-key advisory locks, one per sink (the second key is its Id). */
export const SINK_LOCK_CLASS = 730_019;
/** Name of the claiming job in the scheduler registry (docs/decisions/0014). */
export const SINK_CLAIM_JOB = 'security-sinks';

/** The service's version, from package.json: in every event's metadata and the CEF header. */
export const SERVICE_VERSION: string = (require('../../package.json') as { version: string }).version;

/**
 * Delivers every sealed leaf to each active sink (contract 19), off the request path. One node at a
 * time per sink, cluster-wide: a node delivers a sink while it holds that sink's session advisory lock
 * on a connection of its own (released by PostgreSQL if the node or its connection dies, and another
 * node takes the sink within a second). The cursor only moves by compare-and-set after the receiver
 * acknowledged, so a replay or a node that lost its lock is seen, never overwritten. Failures retry
 * from 1 s doubling to 5 minutes on the injected clock, nothing skipped; once a batch goes through the
 * backlog flows without backoff. While sign-in work waits (ForegroundWork), each batch is followed by
 * a pause nine times as long, so delivery takes about a tenth of the cores sign-in needs (sink-pace.ts).
 * Memory: one batch per sink.
 */
@Injectable()
export class SinkDeliverer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SecuritySinks');
  private readonly workers = new Map<number, Promise<void>>();
  private readonly box: SinkSecretBox;
  private lockRunner: QueryRunner | null = null;
  private claiming = false;
  private stopping = false;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sinks: SecuritySinkRepository,
    private readonly feed: SinkFeed,
    private readonly signer: AuditSigner,
    private readonly clock: Clock,
    private readonly scheduler: SchedulerRegistry,
    private readonly foreground: ForegroundWork,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    this.box = new SinkSecretBox(settings.apiHmacKey);
  }

  get source(): EventSource {
    return { origin: this.signer.origin, version: SERVICE_VERSION, instance: this.settings.instance };
  }

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(SINK_CLAIM_JOB, setInterval(() => void this.claim(), CLAIM_EVERY_MS).unref());
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await Promise.allSettled([...this.workers.values()]);
    await this.dropLocks();
  }

  /** The sinks this node delivers now (tests and the page's state). */
  delivering(): number[] {
    return [...this.workers.keys()];
  }

  /** Takes every active sink no node delivers. Called every second; tests call it to skip the wait. */
  async claim(): Promise<void> {
    if (this.claiming || this.stopping) return;
    this.claiming = true;
    try {
      for (const id of await this.sinks.activeIds()) {
        if (this.workers.has(id) || this.stopping) continue;
        if (!(await this.tryLock(id))) continue;
        const worker = this.deliver(id)
          .catch((error: unknown) => this.logger.warn(`security sink ${id}: delivery stopped, another attempt follows: ${(error as Error).message}`))
          .finally(async () => {
            this.workers.delete(id);
            await this.unlock(id);
          });
        this.workers.set(id, worker);
      }
    } catch (error) {
      this.logger.debug?.(`security sinks: could not look for sinks: ${(error as Error).message}`);
    } finally {
      this.claiming = false;
    }
  }

  /** Opens a sink's secrets for sending (the only place they are in clear, besides the routes' comparison). */
  openSink(row: Pick<SinkRow, 'typeId' | 'url' | 'formatId' | 'secret' | 'headers'>): OpenSink {
    return {
      type: sinkTypeName(row.typeId),
      url: row.url,
      format: sinkFormatName(row.formatId),
      secret: row.secret === null ? null : this.box.open('Secret', row.secret),
      headers: row.headers === null ? {} : (JSON.parse(this.box.open('Headers', row.headers)) as Record<string, string>),
      ca: this.settings.securitySinkCaFile ? readFileSync(this.settings.securitySinkCaFile, 'utf8') : undefined,
    };
  }

  private async deliver(id: number): Promise<void> {
    let sender: SinkSender | null = null;
    let configuration = '';
    let backoffMs = 0;
    let retryAt = 0;
    let warnedAt: number | null = null;
    /** The next batch, read while the current one is on its way (null on a read error: read again). */
    let ahead: { from: number; leaves: Promise<SealedLeaf[] | null> } | null = null;
    /** The sink as the last acknowledgement left it (read in that statement), and whether the lock was checked since. */
    let known: SinkRow | null = null;
    let lockChecked = false;
    try {
      while (!this.stopping) {
        const sink: SinkRow | null = known ?? (await this.sinks.byId(id));
        // Both hold for the iteration right after an acknowledgement only: after a pause, read and check again.
        const lockFresh = lockChecked;
        known = null;
        lockChecked = false;
        if (!sink || !sink.active) return;
        const fingerprint = `${sink.typeId}|${sink.url}|${sink.formatId}|${sink.secret}|${sink.headers}`;
        if (fingerprint !== configuration) {
          sender?.close();
          sender = null;
          configuration = fingerprint;
          backoffMs = 0;
          retryAt = 0;
          try {
            sender = senderFor(this.openSink(sink), this.source);
          } catch (error) {
            // A secret that no longer decrypts (ApiHmacKey changed), an unreadable SecuritySinkCaFile:
            // the sink shows why, and waits for its configuration to change.
            await this.sinks.recordFailure(id, this.clock.now(), (error as Error).message);
          }
        }
        if (!sender) {
          await pause(IDLE_POLL_MS * 10);
          continue;
        }
        // A broken syslog connection: what it took in its last seconds is sent again (contract 19).
        const resendFrom = sender.rewind();
        if (resendFrom !== null && resendFrom < sink.nextLeafIndex) {
          await this.sinks.moveCursor(id, sink.nextLeafIndex, resendFrom, this.clock.now(), false);
          continue;
        }
        if (this.clock.nowMs() < retryAt || sink.nextLeafIndex >= sink.treeSize) {
          await pause(IDLE_POLL_MS);
          continue;
        }
        // The batch's elapsed time, from its read to its acknowledgement: what a yield is measured against.
        const startedMs = this.clock.nowMs();
        if (!lockFresh && !(await this.stillLocked())) return;
        const prefetched: SealedLeaf[] | null = ahead && ahead.from === sink.nextLeafIndex ? await ahead.leaves : null;
        ahead = null;
        const leaves: SealedLeaf[] = prefetched ?? (await this.feed.batch(sink.nextLeafIndex, SINK_BATCH, sink.treeSize));
        if (leaves.length === 0) {
          await pause(IDLE_POLL_MS);
          continue;
        }
        const after: number = leaves[leaves.length - 1].leafIndex + 1;
        if (after < sink.treeSize) {
          ahead = { from: after, leaves: this.feed.batch(after, SINK_BATCH, sink.treeSize).catch(() => null) };
        }
        try {
          await sender.send(leaves);
        } catch (error) {
          ahead = null;
          const now = this.clock.now();
          const message = (error as Error).message || String(error);
          await this.sinks.recordFailure(id, now, message);
          backoffMs = backoffMs === 0 ? SINK_BACKOFF_FIRST_MS : Math.min(backoffMs * 2, SINK_BACKOFF_MAX_MS);
          retryAt = now.getTime() + backoffMs;
          const failingSince = sink.failingSince?.getTime() ?? now.getTime();
          if (now.getTime() - failingSince >= SINK_WARN_AFTER_MS && (warnedAt === null || now.getTime() - warnedAt >= SINK_WARN_EVERY_MS)) {
            warnedAt = now.getTime();
            this.logger.warn(
              `security sink "${sink.name}" failing since ${new Date(failingSince).toISOString()} (${Math.floor((now.getTime() - failingSince) / 60_000)} min), ${sink.treeSize - sink.nextLeafIndex} leaves behind: ${message.slice(0, 200)}`,
            );
          }
          continue;
        }
        backoffMs = 0;
        retryAt = 0;
        warnedAt = null;
        // The next batch's lock check rides beside the acknowledgement: one round trip, not two.
        const [moved, locked]: [SinkRow | null, boolean] = await Promise.all([this.sinks.acknowledge(id, sink.nextLeafIndex, after, this.clock.now()), this.stillLocked()]);
        if (!locked) return;
        lockChecked = true;
        if (moved) known = moved;
        else ahead = null;
        // The next batch's read may still run (in PostgreSQL and here): while sign-in waits, it belongs to this batch's time.
        if (ahead && this.foreground.waiting()) await ahead.leaves;
        await this.yieldToForeground(this.clock.nowMs() - startedMs);
      }
    } finally {
      sender?.close();
    }
  }

  /**
   * While sign-in work waits, gives the cores back for nine times the last batch's time (capped),
   * asking again every slice: the pause ends as soon as nothing waits, or the node stops. Not a
   * backoff (nothing failed, it never grows); with nothing waiting it returns at once.
   */
  private async yieldToForeground(batchMs: number): Promise<void> {
    let remaining = sinkYieldMs(batchMs, this.foreground.waiting());
    while (remaining > 0 && !this.stopping && this.foreground.waiting()) {
      const slice = Math.min(remaining, SINK_YIELD_SLICE_MS);
      await pause(slice);
      remaining -= slice;
    }
  }

  private async locks(): Promise<QueryRunner> {
    if (this.lockRunner && !this.lockRunner.isReleased) return this.lockRunner;
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    this.lockRunner = runner;
    return runner;
  }

  private async tryLock(id: number): Promise<boolean> {
    const runner = await this.locks();
    try {
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock($1::int, $2::int) AS locked', [SINK_LOCK_CLASS, id])) as { locked: boolean }[];
      return locked;
    } catch (error) {
      await this.dropLocks();
      throw error;
    }
  }

  /** Whether this node's lock connection still answers (its locks die with it; then another node may deliver). */
  private async stillLocked(): Promise<boolean> {
    const runner = this.lockRunner;
    if (!runner || runner.isReleased) return false;
    try {
      await runner.query('SELECT 1');
      return true;
    } catch {
      await this.dropLocks();
      return false;
    }
  }

  private async unlock(id: number): Promise<void> {
    const runner = this.lockRunner;
    if (!runner || runner.isReleased) return;
    try {
      await runner.query('SELECT pg_advisory_unlock($1::int, $2::int)', [SINK_LOCK_CLASS, id]);
    } catch {
      await this.dropLocks();
    }
    if (this.workers.size === 0 && this.stopping) await this.dropLocks();
  }

  /**
   * Closes the lock connection: PostgreSQL releases every sink lock this node held. The connection is
   * destroyed, never handed back to the pool, where a session lock would outlive its holder.
   */
  private async dropLocks(): Promise<void> {
    const runner = this.lockRunner;
    this.lockRunner = null;
    if (!runner || runner.isReleased) return;
    const destroy = (runner as unknown as { releasePostgresConnection?: (error: Error) => Promise<void> }).releasePostgresConnection;
    if (typeof destroy === 'function') await destroy.call(runner, new Error('sink locks dropped')).catch(() => undefined);
    else {
      await runner.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
      await runner.release().catch(() => undefined);
    }
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
