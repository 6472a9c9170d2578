import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { boundText, BOUNDS } from '../common/text';
import { KeyUse, UserRegistryApiKeyRepository } from './user-registry-api-key.repository';

/** A key's LastUsedDate is written at most this often (contract 5). */
export const LAST_USED_PERIOD_MS = 60_000;
/**
 * Records when each API key was last used, and by which user agent, without touching the request
 * path: a request only notes the use in memory (at most once a minute per key), and a flush once a
 * minute writes the noted uses in one statement. A failed flush keeps its uses for the next one.
 * Memory stays bounded: one entry per key used within the last minute (only keys that validated reach
 * here), each with a user agent already cut to the column's 512 characters.
 */
@Injectable()
export class ApiKeyUsageWriter implements BeforeApplicationShutdown {
  private readonly logger = new Logger('ApiKeyUsageWriter');
  /** Key id → when its use was last noted (Clock ms); only uses within the last minute are kept. */
  private readonly noted = new Map<number, number>();
  /** Key id → the use to write: its date and the user agent that came with it. */
  private pending = new Map<number, KeyUse>();
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly apiKeys: UserRegistryApiKeyRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * Notes a use of the key with the User-Agent header it came with (raw; null when none); cheap and
   * synchronous. The agent is kept with the date it goes with, so the row never pairs one use's date
   * with another's device.
   */
  touch(keyId: number, userAgent: string | null = null): void {
    const now = this.clock.nowMs();
    const last = this.noted.get(keyId);
    if (last !== undefined && now - last < LAST_USED_PERIOD_MS && now >= last) return;
    this.noted.set(keyId, now);
    this.pending.set(keyId, { usedDate: new Date(now), userAgent: boundText(userAgent, BOUNDS.userAgent) || null });
  }

  /** Writes every noted use; one flush at a time. */
  flush(): Promise<void> {
    if (!this.flushing) {
      this.flushing = this.write().finally(() => {
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

  private async write(): Promise<void> {
    this.forgetOld();
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.apiKeys.recordLastUsed(batch);
    } catch (error) {
      for (const [id, use] of batch) if (!this.pending.has(id)) this.pending.set(id, use);
      this.logger.warn(`could not record API key use, retrying: ${(error as Error).message}`);
    }
  }

  /** Keeps memory bounded by the keys used within the last minute. */
  private forgetOld(): void {
    const now = this.clock.nowMs();
    for (const [id, at] of this.noted) {
      if (now - at >= LAST_USED_PERIOD_MS || now < at) this.noted.delete(id);
    }
  }
}
