import type { Pool, PoolClient } from 'pg';
import { serviceUnavailable } from '../common/problem';

/** Custom setting class that carries a read's parameters into a COPY statement. */
const SETTING_CLASS = 'tm_read';

/**
 * The values of one statement. COPY takes no bind parameters, so each value is set as a session
 * setting with set_config($n) (itself bound) and the statement reads it back as
 * `current_setting('tm_read.sK_n')::type`: no caller value is ever part of SQL text.
 */
export class Params {
  readonly values: { value: unknown; type: string; lowered: boolean }[] = [];
  constructor(private readonly prefix: string) {}

  /** `lowered`: PostgreSQL's lower() is applied to the text when it is set (the same lower() as ILIKE's). */
  add(value: unknown, type: string, lowered = false): string {
    this.values.push({ value, type, lowered });
    return `current_setting('${this.name(this.values.length)}')::${type}`;
  }

  name(n: number): string {
    return `${this.prefix}${n}`;
  }
}

/** Setting-name prefixes in use; the embedded PostgreSQL serves every pool connection from one session. */
class SettingSlots {
  private readonly free: number[] = [];
  private next = 0;
  take(): number {
    return this.free.pop() ?? this.next++;
  }
  give(slot: number): void {
    this.free.push(slot);
  }
}

/** A pool connection lent to one read, with its own setting names. */
export class ReadSession {
  /** Set when the connection must not go back to the pool (a COPY was cut off). */
  broken = false;
  private bound = 0;
  private tuned = false;

  constructor(
    readonly client: PoolClient,
    readonly prefix: string,
  ) {}

  params(): Params {
    return new Params(this.prefix);
  }

  /**
   * Sets the statement's values, and planner settings for this read (`planner`: false on the embedded
   * PGlite, whose one session all connections share).
   * - (No JIT, as for every session of the service on a server, database.module.ts: the planner's cost
   *   of scanning a window row by row crosses jit_above_cost, and compiling then costs more, ≈ 14 ms
   *   measured at 10M rows, than the whole read saves.)
   * - `ordered`: the rows are wanted in the order of the date index. For a whole window the planner
   *   prefers a parallel bitmap scan and a sort (cheaper in its model), which sends nothing until the
   *   sort is done and measured 90-130 ms against 35-75 ms for the ordered index scan (71,000 rows);
   *   with sorting discouraged it streams the index order from the first row.
   * - No sequential scan: every read is bounded by its window on the date index. When the window
   *   covers most of the table the planner prefers a (parallel) sequential scan, which evaluates
   *   `current_setting(…)::timestamptz` of both bounds on every row, where an index scan reads them
   *   once: a 24-hour count over 1M rows measured ≈ 325 ms per worker against ≈ 70 ms for the
   *   index-only scan (bench/RESULTS.md, "Reads at scale").
   * - `clientPaced`: no statement_timeout (the watchdog of the COPY bounds the server instead).
   */
  async bind(params: Params, planner: boolean, ordered: boolean, clientPaced = false): Promise<void> {
    const sets = params.values.map(({ type, lowered }, i) => {
      const text = `$${i + 1}::${type}::text`;
      return `set_config('${params.name(i + 1)}', ${lowered ? `lower(${text})` : text}, false)`;
    });
    if (planner) {
      sets.unshift(`set_config('enable_seqscan', 'off', false)`, `set_config('enable_sort', '${ordered ? 'off' : 'on'}', false)`);
    }
    // A statement paced by its HTTP client lasts as long as the client reads; its deadline on the
    // server's side is the COPY's silence watchdog instead (see BinaryCopy).
    if (planner && clientPaced) sets.unshift(`set_config('statement_timeout', '0', false)`);
    if (sets.length === 0) return;
    await this.client.query(`SELECT ${sets.join(', ')}`, params.values.map((v) => v.value));
    this.bound = Math.max(this.bound, params.values.length);
    this.tuned ||= planner;
  }

  /** Sorting allowed again (a search that may use its trigram index sorts what it finds). */
  async allowSort(): Promise<void> {
    if (this.tuned) await this.client.query(`SELECT set_config('enable_sort', 'on', false)`);
  }

  /** Leaves no read values behind on a pooled connection, and its planner settings as they were. */
  async clear(): Promise<void> {
    const sets = Array.from({ length: this.bound }, (_, i) => `set_config('${this.prefix}${i + 1}', '', false)`);
    if (this.tuned) sets.push(`(SELECT array_agg(set_config(name, reset_val, false)) FROM pg_settings WHERE name IN ('enable_seqscan', 'enable_sort', 'statement_timeout'))`);
    if (sets.length > 0) await this.client.query(`SELECT ${sets.join(', ')}`);
    this.bound = 0;
    this.tuned = false;
  }
}

/**
 * Lends pooled connections to reads, each with its own setting names (see Params); a connection
 * whose COPY was cut off is discarded instead of going back to the pool.
 */
export class ReadSessions {
  private readonly slots = new SettingSlots();

  constructor(private readonly pool: Pool) {}

  async lend<T>(work: (session: ReadSession) => Promise<T>): Promise<T> {
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch {
      throw serviceUnavailable('The database is not reachable.');
    }
    const slot = this.slots.take();
    const session = new ReadSession(client, `${SETTING_CLASS}.s${slot}_`);
    // A checked-out client has no error listener of the pool's; a connection cut under a COPY (by
    // cancel, or by the server) must not become an uncaught 'error' event.
    const onError = () => (session.broken = true);
    client.on('error', onError);
    try {
      return await work(session);
    } finally {
      if (!session.broken) await session.clear().catch(() => (session.broken = true));
      this.slots.give(slot);
      // A broken client keeps the listener: it may still report its end while the pool discards it.
      if (!session.broken) client.off('error', onError);
      client.release(session.broken ? new Error('read cut off') : undefined);
    }
  }
}
