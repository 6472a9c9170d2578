import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { UserRegistryApiKeyRepository } from './user-registry-api-key.repository';

/** What the set knows of an active key; the user's state is still read per request. */
export interface ActiveKey {
  keyId: number;
  userRegistryId: number;
  display: string;
}

/** How old the set may grow before a request reloads it (service.md 3.3: every minute). */
export const ACTIVE_KEYS_RELOAD_MS = 60_000;
/** After a failed reload, requests do not retry it before this. */
const RELOAD_RETRY_MS = 5_000;
const HASH = /^[0-9a-f]{64}$/;

/**
 * The in-memory set of active API keys of this node, keyed by the SHA-256 of the key (contract 5).
 * Kept current by the ApiKeySet/ApiKeyRemove messages of every node, and reloaded from the database
 * every minute and on every bus reconnect, because pub/sub delivery is not guaranteed.
 *
 * A removal always wins over a load that was already in flight when it arrived: a reload or a
 * lookup started before a revocation can never bring the revoked key back.
 *
 * Emits 'removed' (hash) so open streams of a revoked key can be closed.
 */
@Injectable()
export class ActiveApiKeys implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('ActiveApiKeys');
  readonly events = new EventEmitter();
  private keys = new Map<string, ActiveKey>();
  /** Increases on every removal; removals remembers the sequence number of each removed hash. */
  private sequence = 0;
  private readonly removals = new Map<string, number>();
  private loadedAtMs = Number.NEGATIVE_INFINITY;
  private nextAttemptMs = Number.NEGATIVE_INFINITY;
  private reloading: Promise<void> | null = null;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly apiKeys: UserRegistryApiKeyRepository,
    private readonly bus: Bus,
    private readonly clock: Clock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.unsubscribe.push(
      this.bus.subscribe(CHANNELS.apiKeySet, (hash) => void this.onSet(hash)),
      this.bus.subscribe(CHANNELS.apiKeyRemove, (hash) => this.remove(hash)),
      this.bus.onReady(() => void this.reload().catch(() => undefined)),
    );
    await this.reload();
  }

  onModuleDestroy(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  get size(): number {
    return this.keys.size;
  }

  get(hash: string): ActiveKey | undefined {
    return this.keys.get(hash);
  }

  has(hash: string): boolean {
    return this.keys.has(hash);
  }

  /** A key created on this node: active here at once, before the message reaches the others. */
  add(hash: string, key: ActiveKey): void {
    this.keys.set(hash, key);
  }

  /** A key revoked (here, or on another node): refused from now on. */
  remove(hash: string): void {
    if (!HASH.test(hash)) return;
    this.removals.set(hash, ++this.sequence);
    const key = this.keys.get(hash);
    this.keys.delete(hash);
    if (key) {
      this.logger.log(`API key ${key.display} removed from the active set`);
      this.events.emit('removed', hash);
    }
  }

  /**
   * Reloads when the set is older than a minute by the Clock (an API-key request asks this first, so
   * tests move time instead of waiting for the minute); a failed reload keeps the current set.
   */
  async ensureFresh(): Promise<void> {
    const now = this.clock.nowMs();
    if (now - this.loadedAtMs < ACTIVE_KEYS_RELOAD_MS || now < this.nextAttemptMs) return;
    await this.reload().catch(() => undefined);
  }

  /** Replaces the set with the active keys in the database. One reload at a time. */
  reload(): Promise<void> {
    if (!this.reloading) {
      this.reloading = this.load().finally(() => {
        this.reloading = null;
      });
    }
    return this.reloading;
  }

  private async load(): Promise<void> {
    const startedAt = this.clock.nowMs();
    const sequenceAtStart = this.sequence;
    try {
      const rows = await this.apiKeys.findActive();
      const keys = new Map<string, ActiveKey>();
      for (const row of rows) {
        const hash = row.hash;
        if ((this.removals.get(hash) ?? 0) > sequenceAtStart) continue;
        keys.set(hash, { keyId: row.keyId, userRegistryId: row.userRegistryId, display: row.display });
      }
      const removedNow = [...this.keys.keys()].filter((hash) => !keys.has(hash));
      this.keys = keys;
      this.loadedAtMs = startedAt;
      // Removals up to the start of this load are now reflected by the database itself.
      for (const [hash, sequence] of this.removals) if (sequence <= sequenceAtStart) this.removals.delete(hash);
      for (const hash of removedNow) this.events.emit('removed', hash);
    } catch (error) {
      this.nextAttemptMs = this.clock.nowMs() + RELOAD_RETRY_MS;
      this.logger.error(`could not reload the active API keys, keeping the current set: ${(error as Error).message}`);
      throw error;
    }
  }

  /** ApiKeySet from another node: the row is read, since the message carries only the hash. */
  private async onSet(hash: string): Promise<void> {
    if (!HASH.test(hash) || this.keys.has(hash)) return;
    const sequenceAtStart = this.sequence;
    try {
      const row = await this.apiKeys.findActiveByHash(hash);
      if (!row || (this.removals.get(hash) ?? 0) > sequenceAtStart) return;
      this.keys.set(hash, { keyId: row.keyId, userRegistryId: row.userRegistryId, display: row.display });
    } catch (error) {
      this.logger.warn(`could not load a new API key, the next reload will: ${(error as Error).message}`);
    }
  }
}
