import { Logger } from '@nestjs/common';
import { unlink, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { withinDeadline } from './deadline';
import { ensurePrivateDirectory, openPrivateFileForAppend, readPrivateFileAsync, writePrivateFileAsync } from './private-file';
import { messageOf } from './errors';

/**
 * Where a node keeps rows of `table` that wait for the database:
 * `<DataDirectory>/spool/<Instance>.<table>.jsonl`, the instance name made safe for a file name.
 */
export function spoolPath(dataDirectory: string, instance: string, table: string): string {
  const name = instance.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100) || 'node';
  return join(dataDirectory, 'spool', `${name}.${table}.jsonl`);
}

/** The longest a caller waits for the disk to hold its rows (a stalled disk must not hold a logout). */
export const SPOOL_DEADLINE_MS = 1_000;

/**
 * Rows a node keeps while the database cannot take them, on disk as well as in memory, so a node
 * killed during an outage (kill -9, a lost container) writes them when it starts again instead of
 * losing them (docs/decisions/0016): UserLogout rows (AuditWriter) and CaptureQueueHealth minutes
 * (CaptureFlusher). One JSON line per row, appended and flushed to disk (fdatasync); rewritten whole
 * (a new file renamed over the old) once rows reach the database; removed when none wait. A line that
 * cannot be read back (a torn last line after a crash mid-append) is skipped and counted.
 *
 * The file belongs to one node (its `Instance`, unique among the nodes of a deployment, the host name
 * by default): nodes that share a DataDirectory each keep their own. It holds audit data (user names,
 * addresses, user agents), never a credential, and is readable by the service's user only: folder
 * 0700, file 0600 whatever the umask, never opened through a link (src/common/private-file.ts).
 *
 * Every step runs in one queue, so an append and a rewrite never interleave; rows appended while a
 * step runs are written together by the next one (one fdatasync for a burst of logouts, not one
 * each). A disk that refuses a write, or takes longer than SPOOL_DEADLINE_MS, costs durability, never
 * the caller: it is told false (the rows are then in memory only) and the failure is logged.
 */
/** `T` is a row as read back, `L` a row as written (by default the same). */
export class JsonLinesSpool<T, L = T> {
  private readonly logger = new Logger('Spool');
  private handle: FileHandle | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private unusable = false;
  /** Rows appended and not yet written, each with the caller waiting for it. */
  private pending: Array<{ text: string; settle: (onDisk: boolean) => void }> = [];
  private appendQueued = false;

  /** `parse` turns one line's JSON back into a row, or null when it is not one. */
  constructor(
    readonly path: string,
    private readonly parse: (raw: Record<string, unknown>) => T | null,
  ) {}

  /**
   * The rows a previous run of this node left (oldest first); `skipped` lines could not be read. A
   * file that cannot be read throws, and the spool is not used by this run (so it is never overwritten:
   * its rows stay for an operator).
   */
  private async load(): Promise<{ rows: T[]; skipped: number }> {
    let text: string | null;
    try {
      text = await readPrivateFileAsync(this.path);
    } catch (error) {
      this.unusable = true;
      throw error;
    }
    if (text === null) return { rows: [], skipped: 0 };
    const rows: T[] = [];
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const row = this.read(line);
      if (row) rows.push(row);
      else skipped++;
    }
    return { rows, skipped };
  }

  /**
   * What a node does at start: the rows a previous run of it left (oldest first), saying in the log
   * how many, and what could not be read (`what` names the rows there). None when the file cannot be
   * read at all.
   */
  async replay(what: string): Promise<T[]> {
    let loaded: { rows: T[]; skipped: number };
    try {
      loaded = await this.load();
    } catch (error) {
      // It must not stop the node; the file is left as it is for an operator (this run keeps rows in memory only).
      this.logger.error(`cannot read the ${what} kept in ${this.path}: ${messageOf(error)}`);
      return [];
    }
    if (loaded.skipped > 0) this.logger.error(`${loaded.skipped} lines of ${this.path} are not ${what} and were skipped`);
    if (loaded.rows.length > 0) this.logger.warn(`${loaded.rows.length} ${what} kept on disk by an earlier run of this node are waiting for the database`);
    return loaded.rows;
  }

  /**
   * Appends rows and flushes them to disk; resolves whether the disk has them, within
   * SPOOL_DEADLINE_MS (false past it: the write goes on, the caller does not wait for it).
   */
  append(rows: L[]): Promise<boolean> {
    if (this.unusable) return Promise.resolve(false);
    if (rows.length === 0) return Promise.resolve(true);
    const onDisk = new Promise<boolean>((settle) => this.pending.push({ text: lines(rows), settle }));
    if (!this.appendQueued) {
      this.appendQueued = true;
      void this.run(() => this.appendPending(), 'cannot keep rows on disk; they are kept in memory only');
    }
    return withinDeadline(onDisk, SPOOL_DEADLINE_MS).catch(() => false);
  }

  /**
   * Makes the file hold exactly `rows()` (evaluated in the queue, after every append before it):
   * written to a new file, flushed and renamed over the old, so a crash leaves one or the other.
   * Rows appended but not yet written when it runs are taken as covered by `rows()`: a caller keeps
   * every row it still wants in `rows()` from the moment it appends it.
   */
  rewrite(rows: () => L[]): Promise<boolean> {
    return this.run(async () => {
      await this.handle?.close();
      this.handle = null;
      // In one turn: what rows() holds and what it covers.
      const covered = this.pending.splice(0);
      const left = rows();
      try {
        if (left.length === 0) {
          await unlink(this.path).catch((error: NodeJS.ErrnoException) => {
            if (error.code !== 'ENOENT') throw error;
          });
        } else {
          // A new file beside it (O_EXCL, 0600), flushed, renamed over it: one or the other after a crash.
          await writePrivateFileAsync(this.path, lines(left));
        }
      } catch (error) {
        for (const row of covered) row.settle(false);
        throw error;
      }
      for (const row of covered) row.settle(true);
    }, 'cannot update the rows kept on disk');
  }

  async close(): Promise<void> {
    await this.run(async () => {
      await this.handle?.close();
      this.handle = null;
    }, 'cannot close the file');
  }

  /** One write and one flush for every row appended since the last step. */
  private async appendPending(): Promise<void> {
    this.appendQueued = false;
    const batch = this.pending.splice(0);
    if (batch.length === 0) return;
    try {
      if (!this.handle) {
        ensurePrivateDirectory(dirname(this.path));
        this.handle = await openPrivateFileForAppend(this.path);
      }
      await this.handle.appendFile(batch.map((row) => row.text).join(''));
      await this.handle.datasync();
    } catch (error) {
      for (const row of batch) row.settle(false);
      throw error;
    }
    for (const row of batch) row.settle(true);
  }

  private read(line: string): T | null {
    try {
      const raw = JSON.parse(line) as unknown;
      return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? this.parse(raw as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }

  private run(step: () => Promise<void>, failure: string): Promise<boolean> {
    if (this.unusable) return Promise.resolve(false);
    const done = this.queue.then(step).then(
      () => true,
      (error: unknown) => {
        this.logger.error(`${failure} (${this.path}): ${messageOf(error)}`);
        return false;
      },
    );
    this.queue = done;
    return done;
  }
}

const lines = <T>(rows: T[]) => rows.map((row) => `${JSON.stringify(row)}\n`).join('');

/** Readers of a line's fields: a value of the wrong type reads as null. */
export const field = {
  text: (value: unknown): string | null => (typeof value === 'string' ? value : null),
  id: (value: unknown): number | null => (Number.isSafeInteger(value) ? (value as number) : null),
  /** A bigint as its decimal text (a positive one, at most 19 digits), as node-postgres reads it. */
  bigint: (value: unknown): string | null => (typeof value === 'string' && /^[1-9][0-9]{0,18}$/.test(value) ? value : null),
  date(value: unknown): Date | null {
    if (typeof value !== 'string') return null;
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? null : parsed;
  },
};
