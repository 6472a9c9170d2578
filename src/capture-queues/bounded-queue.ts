/** Entries per queue (service.md 8). */
export const QUEUE_CAPACITY = 20_000;
/** Distinct series of the OpenTelemetryMetric queue (service.md 8). */
export const METRIC_SERIES_CAPACITY = 10_000;

/**
 * A bounded in-memory queue: enqueueing is a plain array push (O(1), never waits on I/O); when full,
 * the new entry is dropped and counted. The flusher drains it, and on a failed write puts the entries
 * back (up to the capacity, the overflow counted as dropped) so a database outage loses nothing that fits.
 */
export class BoundedQueue<T> {
  private items: T[] = [];
  private droppedCount = 0;

  /** `check` cleans an entry, or refuses it (null) when it could never be written (contract 13). */
  constructor(
    readonly capacity: number,
    private readonly check: (item: T) => T | null = (item) => item,
  ) {}

  /** Adds the checked entry, or drops and counts it when it cannot be written or the queue is full. */
  enqueue(item: T): boolean {
    const checked = this.items.length < this.capacity ? this.check(item) : null;
    if (checked === null) {
      this.droppedCount++;
      return false;
    }
    this.items.push(checked);
    return true;
  }

  /** An entry set aside by the flush (the database refused it alone) counts as dropped. */
  countDropped(count: number): void {
    this.droppedCount += count;
  }

  get depth(): number {
    return this.items.length;
  }

  /** Entries dropped since the last acknowledged flush. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Takes every entry out; the queue keeps accepting new ones meanwhile. */
  drain(): T[] {
    const items = this.items;
    this.items = [];
    return items;
  }

  /** Puts drained entries back in front of anything enqueued since, up to the capacity. */
  restore(items: T[]): void {
    if (items.length === 0) return;
    const merged = items.concat(this.items);
    if (merged.length > this.capacity) {
      this.droppedCount += merged.length - this.capacity;
      merged.length = this.capacity;
    }
    this.items = merged;
  }

  /** The drop count that a written health row reported is no longer pending. */
  acknowledgeDropped(reported: number): void {
    this.droppedCount = Math.max(0, this.droppedCount - reported);
  }
}

/** One aggregated series of an instrument: count, sum, min and max of its records in the interval. */
export interface MetricSeries {
  name: string;
  tags: Record<string, string>;
  count: number;
  sum: number;
  min: number;
  max: number;
}

/**
 * The OpenTelemetryMetric capture queue: not one entry per record but one aggregate per distinct
 * series (instrument name + tags), at most `capacity` series; a record of a new series beyond that is
 * dropped and counted. Its depth is the number of series.
 */
export class MetricSeriesQueue {
  private series = new Map<string, MetricSeries>();
  private droppedCount = 0;

  constructor(readonly capacity: number) {}

  /** `key` identifies the series (callers cache it per instrument and tags). A value that is not finite is dropped and counted. */
  record(key: string, name: string, tags: Record<string, string>, value: number): boolean {
    if (!Number.isFinite(value)) {
      this.droppedCount++;
      return false;
    }
    const existing = this.series.get(key);
    if (existing) {
      existing.count++;
      existing.sum += value;
      if (value < existing.min) existing.min = value;
      if (value > existing.max) existing.max = value;
      return true;
    }
    if (this.series.size >= this.capacity) {
      this.droppedCount++;
      return false;
    }
    this.series.set(key, { name, tags, count: 1, sum: value, min: value, max: value });
    return true;
  }

  get depth(): number {
    return this.series.size;
  }

  get dropped(): number {
    return this.droppedCount;
  }

  /** Every series with its key, in the order first recorded. */
  drain(): [string, MetricSeries][] {
    const drained = this.series;
    this.series = new Map();
    return [...drained];
  }

  /** Merges drained series back; a series that no longer fits is dropped with all its records counted. */
  restore(drained: [string, MetricSeries][]): void {
    for (const [key, old] of drained) {
      const current = this.series.get(key);
      if (current) {
        current.count += old.count;
        current.sum += old.sum;
        current.min = Math.min(current.min, old.min);
        current.max = Math.max(current.max, old.max);
      } else if (this.series.size < this.capacity) {
        this.series.set(key, old);
      } else {
        this.droppedCount += old.count;
      }
    }
  }

  acknowledgeDropped(reported: number): void {
    this.droppedCount = Math.max(0, this.droppedCount - reported);
  }

  countDropped(count: number): void {
    this.droppedCount += count;
  }
}

/**
 * The largest total a counter row can hold: the largest double not above PostgreSQL's bigint maximum
 * (2^63 - 1). A total that would pass it stays there (saturates): the row is still written, never
 * refused by the database and set aside with the minute's timings (contract 13).
 */
export const MAX_COUNTER_TOTAL = 2 ** 63 - 1024;

/** Accumulated timings of one stage (and model) in the current interval. */
export interface StageCounter<K> {
  key: K;
  totalMicroseconds: number;
  minMicroseconds: number;
  maxMicroseconds: number;
  invokeCount: number;
}

/**
 * Per-stage (and per-model for the archiver) duration accumulators, written as one counter row per
 * key that saw activity in the interval. Bounded: models come from pipeline input.
 */
export class StageCounters<K> {
  private counters = new Map<string, StageCounter<K>>();

  /** At most `capacity` keys (the archiver's are per model: caller input); a new key beyond is not counted. */
  constructor(readonly capacity = 10_000) {}

  /** Adds one timing; false (nothing added) for a duration that is not finite, negative or too large. */
  add(id: string, key: K, durationMicroseconds: number): boolean {
    if (!Number.isFinite(durationMicroseconds) || durationMicroseconds < 0 || durationMicroseconds > Number.MAX_SAFE_INTEGER) return false;
    const counter = this.counters.get(id);
    if (counter) {
      counter.totalMicroseconds = Math.min(counter.totalMicroseconds + durationMicroseconds, MAX_COUNTER_TOTAL);
      counter.invokeCount++;
      if (durationMicroseconds < counter.minMicroseconds) counter.minMicroseconds = durationMicroseconds;
      if (durationMicroseconds > counter.maxMicroseconds) counter.maxMicroseconds = durationMicroseconds;
      return true;
    }
    if (this.counters.size >= this.capacity) return false;
    this.counters.set(id, {
      key,
      totalMicroseconds: durationMicroseconds,
      minMicroseconds: durationMicroseconds,
      maxMicroseconds: durationMicroseconds,
      invokeCount: 1,
    });
    return true;
  }

  get size(): number {
    return this.counters.size;
  }

  /** Every counter with its id, in the order first counted. */
  drain(): [string, StageCounter<K>][] {
    const drained = this.counters;
    this.counters = new Map();
    return [...drained];
  }

  restore(drained: [string, StageCounter<K>][]): void {
    for (const [id, old] of drained) {
      const current = this.counters.get(id);
      if (!current) {
        if (this.counters.size < this.capacity) this.counters.set(id, old);
        continue;
      }
      current.totalMicroseconds = Math.min(current.totalMicroseconds + old.totalMicroseconds, MAX_COUNTER_TOTAL);
      current.invokeCount += old.invokeCount;
      current.minMicroseconds = Math.min(current.minMicroseconds, old.minMicroseconds);
      current.maxMicroseconds = Math.max(current.maxMicroseconds, old.maxMicroseconds);
    }
  }
}
