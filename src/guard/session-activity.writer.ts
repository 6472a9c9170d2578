import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { UserSessionRepository } from '../session-store/user-session.repository';
import type { OpenSession } from './user-state.reader';

/** A session's LastSeenDate is written at most this often (contract 14). */
export const LAST_SEEN_PERIOD_MS = 60_000;
/** Sessions noted between two flushes; beyond it a use is skipped (its next request notes it again). */
export const LAST_SEEN_MEMORY = 10_000;
/**
 * Records when each session was last seen without touching the request path. The guard already reads
 * the session's LastSeenDate with the user row, so a request notes its session only when that value is
 * a minute old; a flush every second writes the noted sessions in one statement, which itself refuses
 * to write a session seen less than a minute before (so several nodes together still write at most
 * once a minute). Nothing needs remembering after a flush, not even a failed one: the stored value
 * stays old, and the session's next request notes it again.
 */
@Injectable()
export class SessionActivityWriter implements BeforeApplicationShutdown {
  private readonly logger = new Logger('SessionActivity');
  /** Session id → when it was seen (Clock ms), since the last flush. */
  private pending = new Map<string, number>();
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly sessions: UserSessionRepository,
    private readonly clock: Clock,
  ) {}

  /** Notes a request of `session`; cheap and synchronous. */
  seen(session: OpenSession): void {
    const now = this.clock.nowMs();
    if (now - session.lastSeen < LAST_SEEN_PERIOD_MS) return;
    if (this.pending.size >= LAST_SEEN_MEMORY && !this.pending.has(session.id)) return;
    this.pending.set(session.id, now);
  }

  /** Writes every noted session; one flush at a time. */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  /** Before the database connection closes (on application shutdown it is already gone). */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private async write(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const ids = [...batch.keys()];
    const seen = ids.map((id) => new Date(batch.get(id)!));
    try {
      await this.sessions.recordLastSeen(ids, seen, LAST_SEEN_PERIOD_MS);
    } catch (error) {
      this.logger.warn(`could not record when ${ids.length} sessions were last seen: ${(error as Error).message}`);
    }
  }
}
