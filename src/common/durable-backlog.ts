import { JsonLinesSpool } from './json-lines-spool';

/** What the backlog knows of a row besides the row itself; never written to the spool. */
export interface BacklogFlags {
  /**
   * It may already be in the table: an earlier run of this node kept it (and may have written it
   * before it died), or its own write failed with an outcome unknown. Checked before it is written.
   */
  replayed?: boolean;
  /** The spool on disk has it. */
  onDisk?: boolean;
}

/** How one kind of row is kept through an outage: the differences between kinds, named. */
export interface DurableBacklogOptions<T extends BacklogFlags, L> {
  /** The spool file (spoolPath of common/json-lines-spool.ts). */
  path: string;
  /** The rows, as the log names them ("UserLogout rows"). */
  what: string;
  /** The most rows kept; what `whenFull` says is given up beyond. */
  capacity: number;
  /**
   * Which row is given up when the backlog is full: `newest` refuses the row being kept (the trail
   * keeps its beginning: UserLogout), `oldest` lets the oldest go (the timeline keeps its most
   * recent minutes: CaptureQueueHealth).
   */
  whenFull: 'give-up-newest' | 'give-up-oldest';
  /** Told of every row given up (to count it, to log it). */
  onGivenUp(row: T): void;
  /**
   * When a row reaches disk: `each-as-kept` appends it the moment it is kept (the caller awaits it:
   * a logout is on disk before it is answered), `when-asked` only when the owner calls
   * spoolUnwritten (a minute of health rows goes to disk once its write has failed).
   */
  spoolWhen: 'each-as-kept' | 'when-asked';
  /**
   * What a rewrite leaves in the file: `every-kept-row`, or only `rows-on-disk` (rows the owner has
   * not asked to spool stay in memory only).
   */
  rewriteKeeps: 'every-kept-row' | 'rows-on-disk';
  /** A row as its spool line holds it: no flags, texts bounded as the table will hold them. */
  toLine(row: T): L;
  /** A spool line's JSON back into a row, or null when it is not one. */
  parse(raw: Record<string, unknown>): T | null;
}

/**
 * Rows that wait for the database, oldest first, in memory and in this node's spool on disk
 * (docs/decisions/0016), so a node killed during an outage writes them when it starts again. It
 * owns the bookkeeping every such queue needs: the replay at start (rows marked `replayed`, to be
 * checked against the table before they are written), keeping within a capacity, the appends to
 * disk, and the rewrite of the file once rows are written. Writing them, and checking a replayed
 * row against its table, stay with the owner, which knows the table.
 */
export class DurableBacklog<T extends BacklogFlags, L = T> {
  private readonly rows: T[] = [];
  private readonly spool: JsonLinesSpool<T, L>;

  constructor(private readonly options: DurableBacklogOptions<T, L>) {
    this.spool = new JsonLinesSpool(options.path, options.parse);
  }

  get path(): string {
    return this.spool.path;
  }

  get length(): number {
    return this.rows.length;
  }

  /** How many kept rows the spool on disk has. */
  get onDisk(): number {
    return this.rows.filter((row) => row.onDisk).length;
  }

  /** The oldest `count` rows (all when omitted), still kept. */
  oldest(count = this.rows.length): T[] {
    return this.rows.slice(0, count);
  }

  /**
   * Puts the rows an earlier run of this node kept on disk first, each marked replayed (that run
   * may have written it); false when there were none.
   */
  async replay(): Promise<boolean> {
    const rows = await this.spool.replay(this.options.what);
    if (rows.length === 0) return false;
    this.rows.unshift(...rows.map((row) => ({ ...row, replayed: true, onDisk: true })));
    return true;
  }

  /**
   * Keeps a row (newest last), giving up a row when full (`whenFull`). `onDisk` resolves whether the
   * disk has it (`each-as-kept`), or false at once (`when-asked`, or the row given up).
   */
  keep(row: T): { kept: boolean; onDisk: Promise<boolean> } {
    if (this.options.whenFull === 'give-up-newest' && this.rows.length >= this.options.capacity) {
      this.options.onGivenUp(row);
      return { kept: false, onDisk: Promise.resolve(false) };
    }
    this.rows.push(row);
    if (this.rows.length > this.options.capacity) {
      const given = this.rows.shift()!;
      this.options.onGivenUp(given);
      if (given.onDisk) void this.rewrite();
    }
    if (this.options.spoolWhen === 'when-asked') return { kept: true, onDisk: Promise.resolve(false) };
    return {
      kept: true,
      onDisk: this.spool.append([this.options.toLine(row)]).then((onDisk) => (row.onDisk = onDisk)),
    };
  }

  /** The kept rows not on disk yet go there (appended, flushed), once each. */
  async spoolUnwritten(): Promise<void> {
    const fresh = this.rows.filter((row) => !row.onDisk);
    if (fresh.length === 0) return;
    // Counted as on disk from the append on, so a rewrite meanwhile keeps them (JsonLinesSpool.rewrite).
    for (const row of fresh) row.onDisk = true;
    if (!(await this.spool.append(fresh.map((row) => this.options.toLine(row))))) for (const row of fresh) row.onDisk = false;
  }

  /** The oldest `count` rows are settled (written, or set aside): no longer kept. Call rewrite after. */
  settle(count: number): void {
    this.rows.splice(0, count);
  }

  /** Makes the spool hold what is still kept (`rewriteKeeps`), once rows are settled. */
  rewrite(): Promise<boolean> {
    return this.spool.rewrite(() => {
      const left = this.options.rewriteKeeps === 'rows-on-disk' ? this.rows.filter((row) => row.onDisk) : this.rows;
      return left.map((row) => this.options.toLine(row));
    });
  }

  /** Every kept row is written: memory and spool are emptied (the file only if it held any). */
  async written(): Promise<void> {
    const spooled = this.rows.some((row) => row.onDisk);
    this.rows.length = 0;
    if (spooled) await this.spool.rewrite(() => []);
  }

  close(): Promise<void> {
    return this.spool.close();
  }
}
