import { BeforeApplicationShutdown, Logger } from '@nestjs/common';
import { Clock } from './clock';
import { boundText, BOUNDS } from './text';

/** A row's LastUsedDate is written at most this often (contract 5 for API keys, 20 for passkeys). */
export const LAST_USED_PERIOD_MS = 60_000;

/** One noted use: when, and the User-Agent it came with (null when it sent none). */
export interface LastUse {
  usedDate: Date;
  userAgent: string | null;
}

/**
 * Records when each row (an API key, a passkey) was last used, and by which user agent, without
 * touching the request path: a request only notes the use in memory (at most once a minute per row),
 * and a flush writes the noted uses in one statement (`write`). A failed flush keeps its uses for the
 * next one. Memory stays bounded: one entry per row used within the last minute (only credentials
 * that verified reach here), each with a user agent already cut to the column's 512 characters.
 */
export abstract class LastUseWriter implements BeforeApplicationShutdown {
  /** Row id → when its use was last noted (Clock ms); only uses within the last minute are kept. */
  private readonly noted = new Map<number, number>();
  /** Row id → the use to write: its date and the user agent that came with it. */
  private pending = new Map<number, LastUse>();
  private flushing: Promise<void> | null = null;

  protected constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Writes the batch in one statement. */
  protected abstract write(uses: Map<number, LastUse>): Promise<void>;

  /**
   * Notes a use of the row with the User-Agent header it came with (raw; null when none); cheap and
   * synchronous. The agent is kept with the date it goes with, so the row never pairs one use's date
   * with another's device.
   */
  touch(id: number, userAgent: string | null = null): void {
    const now = this.clock.nowMs();
    const last = this.noted.get(id);
    if (last !== undefined && now - last < LAST_USED_PERIOD_MS && now >= last) return;
    this.noted.set(id, now);
    this.pending.set(id, { usedDate: new Date(now), userAgent: boundText(userAgent, BOUNDS.userAgent) || null });
  }

  /** Writes every noted use; one flush at a time. */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.writePending().finally(() => {
        this.flushing = null;
      });
    }
    return this.flushing;
  }

  /**
   * Before, not on, application shutdown: the database connection closes on shutdown, and a write
   * started then found it gone ("Driver not Connected") and lost the uses noted last.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private async writePending(): Promise<void> {
    this.forgetOld();
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.write(batch);
    } catch (error) {
      for (const [id, use] of batch) if (!this.pending.has(id)) this.pending.set(id, use);
      this.logger.warn(`could not record uses, retrying: ${(error as Error).message}`);
    }
  }

  /** Keeps memory bounded by the rows used within the last minute. */
  private forgetOld(): void {
    const now = this.clock.nowMs();
    for (const [id, at] of this.noted) {
      if (now - at >= LAST_USED_PERIOD_MS || now < at) this.noted.delete(id);
    }
  }
}
