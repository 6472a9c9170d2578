import type { ClientBase } from 'pg';
import { DatabaseUnavailableError } from '../database/deadlines';

/** The signature that opens PostgreSQL's binary COPY format. */
const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/**
 * One row of a binary COPY, as offsets into the message that carries it: field i is
 * `buffer[starts[i] .. starts[i] + lengths[i]]`, a length of -1 being NULL. The arrays are reused
 * from row to row; read them inside the callback.
 */
export interface CopyRow {
  buffer: Buffer;
  count: number;
  starts: number[];
  lengths: number[];
}

/** The pieces of node-postgres' connection this needs (a Submittable's view of it). */
interface Connection {
  query(text: string): void;
  sendCopyFail(message: string): void;
  stream: { pause(): void; resume(): void; destroy(): void };
}

/**
 * Runs `COPY (query) TO STDOUT (FORMAT binary)` on a node-postgres client and hands each row to
 * `onRow` as PostgreSQL sends it: one CopyData message per row (the protocol says the server always
 * sends single rows), nothing accumulated. `pause` stops reading the server's socket, so a slow
 * consumer holds PostgreSQL back instead of filling this process's memory.
 *
 * COPY takes no bind parameters; callers pass values through session settings (see ReadEngine).
 */
export class BinaryCopy {
  readonly done: Promise<void>;
  private resolve!: () => void;
  private reject!: (error: Error) => void;
  private connection: Connection | null = null;
  private headerRead = false;
  private settled = false;
  private failure: Error | null = null;
  private readonly row: CopyRow = { buffer: Buffer.alloc(0), count: 0, starts: [], lengths: [] };
  private paused = false;
  private silence: NodeJS.Timeout | null = null;

  /**
   * `silenceMs`: the longest PostgreSQL may send nothing while this is reading (not paused); then
   * the COPY is cancelled and fails as the database being unavailable (503 before the first byte). A COPY paced by a slow consumer
   * cannot carry a server-side statement_timeout, so this is its deadline on the server's side.
   */
  constructor(
    private readonly sql: string,
    private readonly onRow: (row: CopyRow) => void,
    private readonly silenceMs: number | null = null,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Whoever awaits `done` sees the failure; this only keeps an early one from being "unhandled".
    this.done.catch(() => undefined);
  }

  /** Starts the COPY on `client` (queued behind anything it is running). */
  run(client: ClientBase): Promise<void> {
    (client as unknown as { query(submittable: BinaryCopy): void }).query(this);
    return this.done;
  }

  pause(): void {
    this.paused = true;
    this.stopWatch();
    this.connection?.stream.pause();
  }

  resume(): void {
    this.paused = false;
    this.watch();
    this.connection?.stream.resume();
  }

  /**
   * Stops the COPY by closing the connection: PostgreSQL ends the statement when its next write
   * fails. The client is then unusable; its owner must discard it, not return it to the pool.
   */
  cancel(): void {
    this.connection?.stream.destroy();
  }

  // --- node-postgres Submittable ---

  submit(connection: Connection): void {
    this.connection = connection;
    connection.query(this.sql);
    this.watch();
  }

  handleCopyData(message: { chunk: Buffer }): void {
    if (!this.paused) this.watch();
    if (this.failure) return;
    try {
      this.parse(message.chunk);
    } catch (error) {
      // Keep reading to the end of the command (the connection stays usable), then report.
      this.failure = error instanceof Error ? error : new Error(String(error));
    }
  }

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('COPY FROM is not expected here');
  }

  handleError(error: Error): void {
    this.settle(this.failure ?? error);
  }

  handleReadyForQuery(): void {
    this.settle(this.failure);
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}

  private watch(): void {
    if (this.silenceMs === null || this.settled) return;
    this.stopWatch();
    this.silence = setTimeout(() => {
      this.failure ??= new DatabaseUnavailableError(`PostgreSQL sent nothing for ${this.silenceMs} ms during a read`);
      this.cancel();
    }, this.silenceMs);
  }

  private stopWatch(): void {
    if (this.silence) clearTimeout(this.silence);
    this.silence = null;
  }

  private settle(error: Error | null): void {
    this.stopWatch();
    if (this.settled) return;
    this.settled = true;
    if (error) this.reject(error);
    else this.resolve();
  }

  private parse(chunk: Buffer): void {
    let at = 0;
    if (!this.headerRead) {
      if (chunk.length < 19 || !chunk.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
      // Signature, flags (int32), then a header extension of the given length.
      at = 19 + chunk.readInt32BE(15);
      this.headerRead = true;
    }
    const row = this.row;
    row.buffer = chunk;
    // Lengths are read byte by byte: on every field of every row, this beats Buffer's checked readers.
    while (at < chunk.length) {
      const count = (chunk[at] << 8) | chunk[at + 1];
      at += 2;
      if (count === 0xffff) return; // trailer (-1)
      for (let i = 0; i < count; i++) {
        const length = (chunk[at] << 24) | (chunk[at + 1] << 16) | (chunk[at + 2] << 8) | chunk[at + 3];
        at += 4;
        row.starts[i] = at;
        row.lengths[i] = length;
        if (length > 0) at += length;
      }
      if (at > chunk.length) throw new Error('a binary COPY row ran past its message');
      row.count = count;
      this.onRow(row);
    }
  }
}
