/**
 * Which partitions the audit and telemetry tables need (contract 16), as pure functions of the
 * clock and of the partitions that exist. Periods are UTC days and UTC months of CreatedDate: a
 * partition [from, to) holds the rows with from <= CreatedDate < to. The SQL that acts on these
 * plans is in partition.repository.ts (the conversion of an existing install is frozen in the
 * migrations' own folder: src/database/migrations/partition-conversion.frozen.ts).
 */

export type Period = 'day' | 'month';

/** A table partitioned by period of CreatedDate. `audit` tables keep a sealed record of every drop. */
export interface PartitionedTable {
  table: string;
  period: Period;
  kind: 'audit' | 'telemetry';
}

/**
 * The partitioned tables by name: the audit trails by month, the nine telemetry tables of contract 10
 * by day, as their migrations made them. Retention keeps RETAINED_TABLES
 * (partitioned-tables.ts): these audit trails and every described telemetry table, with the period
 * its description gives; a spec checks that every table named here is kept.
 */
export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: 'UserLogin', period: 'month', kind: 'audit' },
  { table: 'UserLogout', period: 'month', kind: 'audit' },
  { table: 'AdminChange', period: 'month', kind: 'audit' },
  ...[
    'ArchiverStagePerformanceCounter',
    'CaseCreationStagePerformanceCounter',
    'ArchiverWarning',
    'CaseCreationWarning',
    'ModelInvokeWarning',
    'CaptureQueueHealth',
    'RedisConnectionEvent',
    'RedisSentinelEvent',
    'OpenTelemetryMetric',
  ].map((table) => ({ table, period: 'day' as const, kind: 'telemetry' as const })),
];

/**
 * The partitioned tables of each kind. PARTITIONED_AUDIT_TABLES are the audit trails retention drops by
 * month; the tables the log seals are another list, SEALED_TABLES (audit-log/canonical.ts), which adds
 * AuditRetentionRun (never partitioned). PARTITIONED_TELEMETRY_TABLES are the names as the migrations
 * made them, not the descriptions (telemetry/telemetry.tables.ts TELEMETRY_TABLES).
 */
export const PARTITIONED_TELEMETRY_TABLES = PARTITIONED_TABLES.filter((t) => t.kind === 'telemetry');
export const PARTITIONED_AUDIT_TABLES = PARTITIONED_TABLES.filter((t) => t.kind === 'audit');

/** Periods created ahead of the current one (contract 16: at least the next two). */
export const PERIODS_AHEAD = 2;

/** The column every table is partitioned by. */
export const PARTITION_KEY = 'CreatedDate';

/** Storage parameters of every partition: the append-only autovacuum of migration AppendOnlyAutovacuum. */
export const PARTITION_STORAGE = 'autovacuum_vacuum_insert_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0';

/** The start of the period holding `date` (UTC). */
export function periodStart(period: Period, date: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate()))
    : new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1));
}

/** `start` moved by `n` periods (start is a period start). */
export function addPeriods(period: Period, start: Date, n: number): Date {
  return period === 'day'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + n))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `UserLogin_p202611`, `CaptureQueueHealth_p20261125`: the partition of the period starting at `start`. */
export function partitionName(table: PartitionedTable, start: Date): string {
  const stamp = `${pad(start.getUTCFullYear(), 4)}${pad(start.getUTCMonth() + 1)}${table.period === 'day' ? pad(start.getUTCDate()) : ''}`;
  return `${table.table}_p${stamp}`;
}

/** The partition that stores rows no period partition covers (a spool replay of last year, a skewed clock). */
export function defaultPartitionName(table: PartitionedTable): string {
  return `${table.table}_default`;
}

/** The table an install had before the conversion, attached whole as one partition (no row copied). */
export function legacyPartitionName(table: PartitionedTable): string {
  return `${table.table}_legacy`;
}

/** A partition as the catalog describes it; `from` null is MINVALUE (the legacy partition). */
export interface ExistingPartition {
  name: string;
  isDefault: boolean;
  from: Date | null;
  to: Date | null;
}

/** A period partition to create. */
export interface PlannedPartition {
  name: string;
  from: Date;
  to: Date;
}

function covered(existing: readonly ExistingPartition[], from: Date, to: Date): boolean {
  return existing.some(
    (p) => !p.isDefault && (p.from === null || p.from.getTime() <= from.getTime()) && p.to !== null && p.to.getTime() >= to.getTime(),
  );
}

function overlaps(existing: readonly ExistingPartition[], from: Date, to: Date): boolean {
  return existing.some(
    (p) => !p.isDefault && (p.from === null || p.from.getTime() < to.getTime()) && (p.to === null || p.to.getTime() > from.getTime()),
  );
}

/**
 * The period partitions missing from the current period through PERIODS_AHEAD periods ahead, oldest
 * first. A period partly covered by another partition (never the case for partitions made here, whose
 * bounds are period starts) is left alone: PostgreSQL would refuse the overlap.
 */
export function missingAhead(table: PartitionedTable, now: Date, existing: readonly ExistingPartition[]): PlannedPartition[] {
  const missing: PlannedPartition[] = [];
  const current = periodStart(table.period, now);
  for (let i = 0; i <= PERIODS_AHEAD; i++) {
    const from = addPeriods(table.period, current, i);
    const to = addPeriods(table.period, from, 1);
    if (!covered(existing, from, to) && !overlaps(existing, from, to)) missing.push({ name: partitionName(table, from), from, to });
  }
  return missing;
}

/** The period partitions for rows dated `dates` (rows found in DEFAULT), one per distinct period, none that would overlap. */
export function partitionsFor(table: PartitionedTable, dates: readonly Date[], existing: readonly ExistingPartition[]): PlannedPartition[] {
  const starts = new Map<number, Date>();
  for (const date of dates) {
    const start = periodStart(table.period, date);
    starts.set(start.getTime(), start);
  }
  return [...starts.values()]
    .sort((a, b) => a.getTime() - b.getTime())
    .map((from) => ({ name: partitionName(table, from), from, to: addPeriods(table.period, from, 1) }))
    .filter((p) => !overlaps(existing, p.from, p.to));
}

/** The instant before which a whole period is past retention; null when retention is 0 (keep for ever). */
export function retentionCutoff(now: Date, retentionMs: number): Date | null {
  return retentionMs > 0 ? new Date(now.getTime() - retentionMs) : null;
}

/**
 * The partitions whose whole range is older than the cutoff (upper bound at or before it), oldest
 * first. DEFAULT is never one: its rows are first moved into their period partitions.
 */
export function expiredPartitions(existing: readonly ExistingPartition[], cutoff: Date | null): ExistingPartition[] {
  if (!cutoff) return [];
  return existing
    .filter((p) => !p.isDefault && p.to !== null && p.to.getTime() <= cutoff.getTime())
    .sort((a, b) => a.to!.getTime() - b.to!.getTime());
}

/**
 * The upper bound of the legacy partition when an install is converted: the period after both the
 * newest row and the next period, so rows written by nodes still on the previous version while the
 * migration runs (dated now) stay inside it, whatever the hour.
 */
export function legacyUpperBound(period: Period, now: Date, newest: Date | null): Date {
  const afterNext = addPeriods(period, periodStart(period, now), 2);
  if (!newest) return afterNext;
  const afterNewest = addPeriods(period, periodStart(period, newest), 1);
  return afterNewest.getTime() > afterNext.getTime() ? afterNewest : afterNext;
}

/** A timestamptz literal for DDL (partition bounds cannot be bound parameters): an ISO-8601 UTC instant. */
export function timestampLiteral(date: Date): string {
  return `'${date.toISOString()}'::timestamptz`;
}

/** A quoted identifier; the names here are built from the fixed table list and digits, never from input. */
export function ident(name: string): string {
  if (!/^[A-Za-z0-9_]{1,63}$/.test(name)) throw new Error(`not a partition-safe identifier: ${name}`);
  return `"${name}"`;
}
