import { Logger } from '@nestjs/common';
import { mkdir, open, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { LogoutOutcomeId, LogoutReasonId } from './audit.types';

/** A UserLogout row waiting for the database, as the spool keeps it (see AuditWriter). */
export interface SpooledLogout {
  createdDate: Date;
  createdUser: string | null;
  userRegistryId: number | null;
  tenantRegistryId: number | null;
  reasonId: LogoutReasonId;
  outcomeId: LogoutOutcomeId;
  context: { remoteIp: string | null; localIp: string | null; userAgent: string | null } | null;
  sessionStartDate: Date | null;
  cutByUser?: string | null;
  message?: string | null;
}

/** The file names of a node's spool: `<DataDirectory>/audit-spool/<Instance>.jsonl`, the name made safe. */
export function spoolPath(dataDirectory: string, instance: string): string {
  const name = instance.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'node';
  return join(dataDirectory, 'audit-spool', `${name}.jsonl`);
}

/**
 * The UserLogout rows a node keeps while the database cannot take them, on disk as well as in memory,
 * so a node killed during an outage (kill -9, a lost container) writes them when it starts again
 * instead of losing them (docs/decisions/0016). One JSON line per row, appended and flushed to disk
 * (fdatasync) before the logout answers; rewritten whole (a new file renamed over the old) once rows
 * reach the database; removed when none wait. A torn last line (a crash mid-append) is skipped.
 *
 * The file belongs to one node (its `Instance`, unique among the nodes of a deployment, the host name
 * by default): nodes that share a DataDirectory each keep their own. The file holds audit data (user
 * names, addresses, user agents), never a credential, and is readable by the service's user only.
 *
 * Every step runs in one queue, so an append and a rewrite never interleave. A disk that refuses a
 * write costs durability, never the logout: the row stays in memory as before and the failure is
 * logged.
 */
export class AuditSpool {
  private readonly logger = new Logger('Audit');
  private handle: FileHandle | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private unusable = false;

  constructor(readonly path: string) {}

  /**
   * The rows a previous run of this node left (oldest first); `skipped` lines could not be read. A
   * file that cannot be read throws, and the spool is not used by this run (so it is never overwritten:
   * its rows stay for an operator).
   */
  async load(): Promise<{ rows: SpooledLogout[]; skipped: number }> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { rows: [], skipped: 0 };
      this.unusable = true;
      throw error;
    }
    const rows: SpooledLogout[] = [];
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      const row = parse(line);
      if (row) rows.push(row);
      else skipped++;
    }
    return { rows, skipped };
  }

  /** Appends one row and flushes it to disk; resolves whether the disk has it. */
  append(row: SpooledLogout): Promise<boolean> {
    return this.run(async () => {
      if (!this.handle) {
        await mkdir(join(this.path, '..'), { recursive: true, mode: 0o700 });
        this.handle = await open(this.path, 'a', 0o600);
      }
      await this.handle.appendFile(`${JSON.stringify(row)}\n`);
      await this.handle.datasync();
    }, 'cannot keep a UserLogout row on disk; it is kept in memory only');
  }

  /**
   * Makes the file hold exactly `rows()` (evaluated in the queue, after every append before it):
   * written to a new file, flushed and renamed over the old, so a crash leaves one or the other.
   */
  rewrite(rows: () => SpooledLogout[]): Promise<boolean> {
    return this.run(async () => {
      await this.handle?.close();
      this.handle = null;
      const left = rows();
      if (left.length === 0) {
        await unlink(this.path).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'ENOENT') throw error;
        });
        return;
      }
      const next = `${this.path}.next`;
      const file = await open(next, 'w', 0o600);
      try {
        await file.writeFile(left.map((row) => `${JSON.stringify(row)}\n`).join(''));
        await file.datasync();
      } finally {
        await file.close();
      }
      await rename(next, this.path);
    }, 'cannot update the UserLogout rows kept on disk');
  }

  async close(): Promise<void> {
    await this.run(async () => {
      await this.handle?.close();
      this.handle = null;
    }, 'cannot close the UserLogout spool');
  }

  private run(step: () => Promise<void>, failure: string): Promise<boolean> {
    if (this.unusable) return Promise.resolve(false);
    const done = this.queue.then(step).then(
      () => true,
      (error: unknown) => {
        this.logger.error(`${failure} (${this.path}): ${error instanceof Error ? error.message : String(error)}`);
        return false;
      },
    );
    this.queue = done;
    return done;
  }
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const id = (value: unknown): number | null => (Number.isSafeInteger(value) ? (value as number) : null);
function date(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

/** One line back into a row, or null when it is not one (a torn or foreign line). */
function parse(line: string): SpooledLogout | null {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const createdDate = date(raw.createdDate);
  const reasonId = id(raw.reasonId);
  const outcomeId = id(raw.outcomeId);
  if (!createdDate || reasonId === null || outcomeId === null) return null;
  const context = typeof raw.context === 'object' && raw.context !== null ? (raw.context as Record<string, unknown>) : null;
  return {
    createdDate,
    createdUser: text(raw.createdUser),
    userRegistryId: id(raw.userRegistryId),
    tenantRegistryId: id(raw.tenantRegistryId),
    reasonId: reasonId as LogoutReasonId,
    outcomeId: outcomeId as LogoutOutcomeId,
    context: context && { remoteIp: text(context.remoteIp), localIp: text(context.localIp), userAgent: text(context.userAgent) },
    sessionStartDate: date(raw.sessionStartDate),
    cutByUser: text(raw.cutByUser),
    message: text(raw.message),
  };
}
