import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import {
  expiredPartitions,
  ExistingPartition,
  missingAhead,
  PartitionedTable,
  partitionsFor,
  retentionCutoff,
} from './partition-plan';
import { RETAINED_TABLES } from './partitioned-tables';
import { PartitionRepository, PartitionSession } from './partition.repository';
import { messageOf } from '../common/errors';

/**
 * Writes the sealed record of an audit partition's drop (contract 16) and answers once it is sealed;
 * throws when it could not be, and the partition then stays.
 */
export abstract class AuditRetentionRecorder {
  abstract recordDrop(entry: { tableName: string; partitionName: string; cutoff: Date; rowCount: number }): Promise<void>;
}

/**
 * Says which active SIEM sinks have not yet acknowledged a leaf (contract 19): an audit partition is
 * dropped only once every active sink is past its last leaf.
 */
export abstract class AuditDropGate {
  /** The names of the active sinks whose cursor is at or below `lastLeafIndex`, with their cursor. */
  abstract unacknowledged(lastLeafIndex: number): Promise<{ name: string; nextLeafIndex: number }[]>;
}

/** An audit partition past retention kept because active sinks have not acknowledged its leaves (contract 19). */
export interface HeldPartition {
  partition: string;
  lastLeafIndex: number;
  sinks: { name: string; nextLeafIndex: number }[];
}

/** What one run did, for the log and the tests. */
export interface MaintenanceReport {
  /** False when another node held the partition lock (it did the work). */
  ran: boolean;
  created: string[];
  /** Rows found in DEFAULT and moved into their period partitions, per table. */
  moved: Record<string, number>;
  dropped: string[];
  /** Audit partitions past retention kept because an active sink has not acknowledged their leaves. */
  heldForSinks: HeldPartition[];
}

/**
 * Partition maintenance and retention (contract 16): partitions made ahead, rows of DEFAULT moved to
 * their periods, and every partition whose whole period is older than its table's retention detached
 * and dropped. Never a DELETE. One node at a time (an advisory lock; a node that finds it taken skips
 * the run, the other is doing it). Time is the injected Clock, so tests move it instead of waiting.
 */
@Injectable()
export class PartitionMaintenance {
  private readonly logger = new Logger('Retention');
  private running: Promise<MaintenanceReport> | null = null;

  constructor(
    private readonly partitions: PartitionRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly auditRecorder: AuditRetentionRecorder,
    private readonly dropGate: AuditDropGate,
  ) {}

  /**
   * The audit partitions past retention that an active sink holds back now (the Audit integrity page),
   * read from the catalog and the sinks' cursors, so every node answers alike. Read-only; without the
   * partition lock. Nothing to read but the catalog unless retention keeps a partition (it drops the
   * others daily), so a page view costs one catalog query.
   */
  heldForSinksNow(): Promise<HeldPartition[]> {
    const now = this.clock.now();
    return this.partitions.reading(async (session) => {
      const audit = RETAINED_TABLES.filter((table) => table.kind === 'audit');
      const existing = await session.list(audit);
      const held: HeldPartition[] = [];
      for (const table of audit) {
        for (const partition of expiredPartitions(existing.get(table.table) ?? [], retentionCutoff(now, this.retentionOf(table)))) {
          const owed = await this.owed(session, table, partition);
          if (owed) held.push(owed);
        }
      }
      return held;
    });
  }

  /** The active sinks that have not acknowledged the partition's last leaf, or null when none holds it. */
  private async owed(session: PartitionSession, table: PartitionedTable, partition: ExistingPartition): Promise<HeldPartition | null> {
    const lastLeafIndex = await session.lastLeaf(table.table, partition.name);
    const sinks = lastLeafIndex === null ? [] : await this.dropGate.unacknowledged(lastLeafIndex);
    return sinks.length > 0 ? { partition: partition.name, lastLeafIndex: lastLeafIndex!, sinks } : null;
  }

  /** Partitions ahead only (at start, before the first request): cheap when nothing is missing. */
  ensurePartitions(): Promise<MaintenanceReport> {
    return this.once(false);
  }

  /** The daily run: partitions ahead, DEFAULT emptied, expired partitions dropped. */
  applyRetention(): Promise<MaintenanceReport> {
    return this.once(true);
  }

  /** The retention of one table, in milliseconds (0: for ever). */
  retentionOf(table: PartitionedTable): number {
    return table.kind === 'audit' ? this.settings.auditRetentionMs : this.settings.telemetryRetentionMs;
  }

  private once(retention: boolean): Promise<MaintenanceReport> {
    // Runs of this node never overlap (the advisory lock is re-entrant within one session, and the
    // embedded database has only one); a run asked for while another is under way waits for it, then runs.
    const previous = this.running ?? Promise.resolve(null);
    const run = previous
      .catch(() => null)
      .then(() => this.run(retention))
      .finally(() => {
        if (this.running === run) this.running = null;
      });
    this.running = run;
    return run;
  }

  private async run(retention: boolean): Promise<MaintenanceReport> {
    const report: MaintenanceReport = { ran: false, created: [], moved: {}, dropped: [], heldForSinks: [] };
    const result = await this.partitions.exclusively(async (session) => {
      report.ran = true;
      const now = this.clock.now();
      const existing = await session.list(RETAINED_TABLES);
      for (const table of RETAINED_TABLES) {
        // A table not (yet) converted by its migration has no partitions to look after.
        if ((existing.get(table.table) ?? []).length === 0) continue;
        try {
          await this.maintainTable(session, table, existing.get(table.table) ?? [], now, retention, report);
        } catch (error) {
          // One table's failure (a lock not granted in time) leaves the others to go on; the next run catches up.
          this.logger.error(`partition maintenance of ${table.table} failed, the next run will try again: ${messageOf(error)}`);
        }
      }
      return report;
    });
    if (result === null) return report;
    if (report.created.length > 0) this.logger.log(`created partitions ${report.created.join(', ')}`);
    for (const [table, count] of Object.entries(report.moved)) this.logger.log(`moved ${count} ${table} rows out of the default partition`);
    if (report.dropped.length > 0) this.logger.log(`dropped partitions past retention: ${report.dropped.join(', ')}`);
    for (const held of report.heldForSinks) {
      const sinks = held.sinks.map((s) => `"${s.name}" (next leaf ${s.nextLeafIndex})`).join(', ');
      this.logger.warn(`partition ${held.partition} is past retention but kept: security sinks ${sinks} have not acknowledged its leaves up to ${held.lastLeafIndex}; dropped once they have`);
    }
    return report;
  }

  private async maintainTable(
    session: PartitionSession,
    table: PartitionedTable,
    partitions: ExistingPartition[],
    now: Date,
    retention: boolean,
    report: MaintenanceReport,
  ): Promise<void> {
    // Rows dated where no partition was: into partitions of their periods, so retention removes them with their period.
    // (One EXISTS probe when DEFAULT is empty, as it nearly always is.)
    const defaultPartition = partitions.find((p) => p.isDefault);
    if (!defaultPartition) {
      // Without DEFAULT a row dated outside every partition would be refused: never left so.
      await session.create(table, 'default');
      report.created.push(`${table.table}_default`);
    } else if (await session.defaultHasRows(table)) {
      const { created, rows } = await session.moveDefaultRows(table, (dates) => partitionsFor(table, dates, partitions));
      report.moved[table.table] = rows;
      report.created.push(...created.map((p) => p.name));
      partitions = [...partitions, ...created.map((p) => ({ name: p.name, isDefault: false, from: p.from, to: p.to }))];
    }
    for (const partition of missingAhead(table, now, partitions)) {
      await session.create(table, partition);
      report.created.push(partition.name);
      partitions = [...partitions, { name: partition.name, isDefault: false, from: partition.from, to: partition.to }];
    }
    if (!retention) return;
    for (const partition of expiredPartitions(partitions, retentionCutoff(now, this.retentionOf(table)))) {
      if (table.kind === 'audit') {
        // Contract 19: never drop rows whose events an active sink still owes its SIEM.
        const owed = await this.owed(session, table, partition);
        if (owed) {
          report.heldForSinks.push(owed);
          continue;
        }
        await this.auditRecorder.recordDrop({
          tableName: table.table,
          partitionName: partition.name,
          cutoff: partition.to!,
          rowCount: await session.count(partition.name),
        });
      }
      await session.detachAndDrop(table, partition);
      report.dropped.push(partition.name);
    }
  }
}
