import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { failFastRedis, redisKeyNamespace } from '../bus/redis.bus';
import { Clock } from '../common/clock';
import { withinDeadline } from '../common/deadline';
import { AppSettings, SETTINGS } from '../config/config.module';
import { DATABASE_IDENTITY } from '../database/database-identity';
import { throttleAddress } from '../common/throttle-address';
import { AnonymousLogoutRepository } from './anonymous-logout.repository';

/** Rows for callers without a session: at most one per address per this period (service.md 2.4). */
export const ANONYMOUS_LOGOUT_PERIOD_MS = 60_000;
/** Addresses remembered in memory when the shared store cannot be reached; the oldest are forgotten first. */
export const ANONYMOUS_LOGOUT_MEMORY = 10_000;
/** How long the shared store may take before this node decides alone (the logout answers 200 anyway). */
const STORE_DEADLINE_MS = 1000;

/** Claims the address's row when its last one is a period old (or from a clock that was set back). KEYS[1]; ARGV now, period, ttl. */
const CLAIM = `
local last = tonumber(redis.call('GET', KEYS[1]))
local now = tonumber(ARGV[1])
if last and now - last < tonumber(ARGV[2]) and now >= last then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
return 1`;

/**
 * The once-a-minute rule for logout rows without a session (service.md 2.4, contract 13), held across
 * every node: a claim is one atomic step of the shared store (a Lua script on Redis when configured,
 * else one INSERT … ON CONFLICT on the database), so 30 logouts from one address spread over any number
 * of nodes write one row. The address is contract 13's client address (TrustProxy), an IPv6 client
 * counted by its /64 like the sign-in throttle, so a caller cannot write a row per address it owns.
 * When the store does not answer within its deadline this node decides from its own bounded memory:
 * the logout still answers 200, and at worst one row per node per minute is written.
 */
@Injectable()
export class AnonymousLogoutLimiter implements OnModuleDestroy {
  private readonly logger = new Logger('Logout');
  /** Address → when its last anonymous row was written here (Clock ms), oldest first. */
  private readonly remembered = new Map<string, number>();
  private readonly redis: (Redis & { anonymousLogoutClaim(key: string, now: string, period: string, ttl: string): Promise<number> }) | null;
  private readonly namespace: string;

  constructor(
    private readonly claims: AnonymousLogoutRepository,
    private readonly clock: Clock,
    @Inject(SETTINGS) settings: AppSettings,
    @Inject(DATABASE_IDENTITY) databaseIdentity: string,
  ) {
    this.namespace = redisKeyNamespace(settings.redisChannelPrefix, databaseIdentity);
    if (settings.redisConnectionString) {
      // Failures surface as claims decided in memory.
      this.redis = failFastRedis(settings.redisConnectionString, 'tm-anonymous-logout', STORE_DEADLINE_MS) as AnonymousLogoutLimiter['redis'];
      this.redis!.defineCommand('anonymousLogoutClaim', { numberOfKeys: 1, lua: CLAIM });
    } else {
      this.redis = null;
    }
  }

  /** True when this address may have its row now (and from now on not for a period, on any node). */
  async claim(remoteIp: string | null): Promise<boolean> {
    const address = throttleAddress(remoteIp);
    const now = this.clock.nowMs();
    try {
      return await withinDeadline(this.claimShared(address, now), STORE_DEADLINE_MS);
    } catch (error) {
      this.logger.warn(`the once-a-minute rule for logouts without a session is decided on this node alone: ${(error as Error).message}`);
      return this.claimInMemory(address, now);
    }
  }

  /** Once a minute, addresses whose period ended are forgotten (the database; Redis keys expire). */
  async purge(): Promise<void> {
    if (this.redis) return;
    await this.claims
      .deleteClaimedBefore(new Date(this.clock.nowMs() - ANONYMOUS_LOGOUT_PERIOD_MS))
      .catch((error: unknown) => this.logger.warn(`could not forget old anonymous logout addresses: ${(error as Error).message}`));
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }

  private async claimShared(address: string, now: number): Promise<boolean> {
    if (this.redis) {
      const claimed = await this.redis.anonymousLogoutClaim(
        `${this.namespace}:AnonymousLogout:${address}`,
        String(now),
        String(ANONYMOUS_LOGOUT_PERIOD_MS),
        String(ANONYMOUS_LOGOUT_PERIOD_MS + 60_000),
      );
      return Number(claimed) === 1;
    }
    // One statement decides and remembers (AnonymousLogoutRepository.claim).
    return this.claims.claim(address, new Date(now), new Date(now - ANONYMOUS_LOGOUT_PERIOD_MS));
  }

  private claimInMemory(address: string, now: number): boolean {
    // Forget what is older than the period (the map is in write order), and beyond the memory bound.
    for (const [known, at] of this.remembered) {
      if (now - at < ANONYMOUS_LOGOUT_PERIOD_MS && this.remembered.size <= ANONYMOUS_LOGOUT_MEMORY) break;
      this.remembered.delete(known);
    }
    const last = this.remembered.get(address);
    if (last !== undefined && now - last < ANONYMOUS_LOGOUT_PERIOD_MS && now >= last) return false;
    this.remembered.delete(address);
    this.remembered.set(address, now);
    while (this.remembered.size > ANONYMOUS_LOGOUT_MEMORY) this.remembered.delete(this.remembered.keys().next().value!);
    return true;
  }
}
