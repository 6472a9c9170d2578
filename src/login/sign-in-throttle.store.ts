import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { Repository } from 'typeorm';
import { failFastRedis } from '../bus/redis.bus';
import { SignInThrottleEntry } from './sign-in-throttle.entity';

/** One address's window: its start (Clock ms) and the sign-ins counted in it so far. */
export interface ThrottleWindow {
  startMs: number;
  count: number;
  /** Counted in the database because Redis could not answer (RedisOrDatabaseThrottleStore). */
  inDatabase?: boolean;
}

/**
 * Where failed sign-ins per address are counted, shared by every node. Each operation is one atomic
 * step, so concurrent sign-ins from one address each get their own place in the count. Times come
 * from the service's Clock (tests move it), never from the store's own clock.
 */
export abstract class SignInThrottleStore {
  /** Counts one sign-in in the address's window, starting a new window when the last one ended. */
  abstract take(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow>;
  /** Takes one count back (a sign-in that succeeded), if the window it was taken in still runs. */
  abstract giveBack(address: string, window: ThrottleWindow): Promise<void>;
  /** The address's running window, without counting anything; null when none runs. */
  abstract peek(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow | null>;
  /** Forgets windows that ended. */
  abstract purge(nowMs: number, windowMs: number): Promise<void>;
  abstract close(): Promise<void>;
}

/**
 * The database's count (no Redis configured), and the SignInThrottle table's repository: every
 * statement on that table is here. Raw SQL in `take` only: one INSERT … ON CONFLICT decides whether
 * the window ended and counts in the same statement (TypeORM's upsert cannot express the conditional
 * reset), which is what makes concurrent sign-ins from one address on several nodes count exactly
 * (docs/decisions/0013, test/sign-in-throttle.e2e-spec.ts).
 */
@Injectable()
export class DatabaseThrottleStore extends SignInThrottleStore {
  constructor(@InjectRepository(SignInThrottleEntry) private readonly repository: Repository<SignInThrottleEntry>) {
    super();
  }

  async take(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow> {
    const rows: Array<{ start: Date; count: number }> = await this.repository.query(
      `INSERT INTO "SignInThrottle" AS t ("Address", "WindowStart", "FailureCount") VALUES ($1, $2, 1)
       ON CONFLICT ("Address") DO UPDATE SET
         "WindowStart" = CASE WHEN t."WindowStart" <= $3 THEN EXCLUDED."WindowStart" ELSE t."WindowStart" END,
         "FailureCount" = CASE WHEN t."WindowStart" <= $3 THEN 1 ELSE t."FailureCount" + 1 END
       RETURNING "WindowStart" AS start, "FailureCount" AS count`,
      [address, new Date(nowMs), new Date(nowMs - windowMs)],
    );
    return { startMs: rows[0].start.getTime(), count: rows[0].count };
  }

  async giveBack(address: string, { startMs }: ThrottleWindow): Promise<void> {
    await this.repository
      .createQueryBuilder()
      .update()
      .set({ failureCount: () => 'GREATEST("FailureCount" - 1, 0)' })
      .where('"Address" = :address AND "WindowStart" = :start', { address, start: new Date(startMs) })
      .execute();
  }

  async peek(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow | null> {
    const row = await this.repository
      .createQueryBuilder('t')
      .where('t."Address" = :address AND t."WindowStart" > :since', { address, since: new Date(nowMs - windowMs) })
      .getOne();
    return row ? { startMs: row.windowStart.getTime(), count: row.failureCount } : null;
  }

  async purge(nowMs: number, windowMs: number): Promise<void> {
    await this.repository
      .createQueryBuilder()
      .delete()
      .where('"WindowStart" <= :since', { since: new Date(nowMs - windowMs) })
      .execute();
  }

  async close(): Promise<void> {}
}

/** Counts one sign-in; a new window when none runs or the last one ended. KEYS[1]; ARGV now, window, ttl. */
const TAKE = `
local start = tonumber(redis.call('HGET', KEYS[1], 's'))
local now = tonumber(ARGV[1])
local count
if (not start) or now - start >= tonumber(ARGV[2]) then
  start = now
  count = 1
  redis.call('HSET', KEYS[1], 's', ARGV[1], 'c', 1)
else
  count = redis.call('HINCRBY', KEYS[1], 'c', 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {tostring(start), count}`;

/** Takes one count back when the window that counted it still runs. KEYS[1]; ARGV start. */
const GIVE_BACK = `
if redis.call('HGET', KEYS[1], 's') == ARGV[1] and tonumber(redis.call('HGET', KEYS[1], 'c')) > 0 then
  redis.call('HINCRBY', KEYS[1], 'c', -1)
end
return 0`;

/**
 * The Redis count (RedisConnectionString set): one hash per address, changed by Lua scripts so each
 * step is atomic on the server. Keys start with RedisChannelPrefix and a namespace derived from the
 * database the nodes share, so two deployments on one Redis never count each other's failures. The key expiry (real time) only
 * cleans up; whether a window ended is decided on the service's Clock. The connection has no offline
 * queue: while Redis is down a command fails at once, never left waiting.
 */
export class RedisThrottleStore extends SignInThrottleStore {
  private readonly client: Redis & {
    throttleTake(key: string, now: string, window: string, ttl: string): Promise<[string, number]>;
    throttleGiveBack(key: string, start: string): Promise<number>;
  };

  constructor(
    connectionString: string,
    private readonly namespace: string,
    commandTimeoutMs: number,
  ) {
    super();
    // Connection errors surface as failed commands: the database counts meanwhile (RedisOrDatabaseThrottleStore).
    this.client = failFastRedis(connectionString, 'tm-throttle', commandTimeoutMs) as RedisThrottleStore['client'];
    this.client.defineCommand('throttleTake', { numberOfKeys: 1, lua: TAKE });
    this.client.defineCommand('throttleGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
  }

  /** `<RedisChannelPrefix><deployment>:SignInThrottle:<address>`. */
  private key(address: string): string {
    return `${this.namespace}:SignInThrottle:${address}`;
  }

  async take(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow> {
    const [start, count] = await this.client.throttleTake(this.key(address), String(nowMs), String(windowMs), String(windowMs + 60_000));
    return { startMs: Number(start), count: Number(count) };
  }

  async giveBack(address: string, { startMs }: ThrottleWindow): Promise<void> {
    await this.client.throttleGiveBack(this.key(address), String(startMs));
  }

  async peek(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow | null> {
    const [start, count] = await this.client.hmget(this.key(address), 's', 'c');
    if (start === null || count === null || nowMs - Number(start) >= windowMs) return null;
    return { startMs: Number(start), count: Number(count) };
  }

  async purge(): Promise<void> {
    // Keys expire on their own.
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/** After Redis failed to count, how long sign-ins go straight to the database before Redis is tried again. */
const REDIS_RETRY_AFTER_MS = 5_000;

/**
 * Redis first and, while Redis cannot answer, the database the nodes share (contract 13 names both
 * stores). A Redis outage therefore never stops sign-in and never stops the throttle: the count goes
 * on, exact across nodes, in the SignInThrottle table. What Redis had counted before the outage is not
 * carried over (an address gains at most one more window of attempts, while the account lockout still
 * holds); a window counted in the database is given back there. After a failure Redis is left alone
 * for a few seconds, so a black-holed Redis costs one command timeout, not one per sign-in. Only when
 * neither store answers is the sign-in refused (503, fail closed: docs/decisions/0013).
 */
export class RedisOrDatabaseThrottleStore extends SignInThrottleStore {
  private readonly logger = new Logger('SignInThrottle');
  private redisRetryAt = 0;

  constructor(
    private readonly redis: RedisThrottleStore,
    private readonly database: DatabaseThrottleStore,
  ) {
    super();
  }

  take(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow> {
    return this.redisElseDatabase(async (store) => {
      const window = await store.take(address, nowMs, windowMs);
      return store === this.database ? { ...window, inDatabase: true } : window;
    });
  }

  async giveBack(address: string, window: ThrottleWindow): Promise<void> {
    await (window.inDatabase ? this.database : this.redis).giveBack(address, window);
  }

  peek(address: string, nowMs: number, windowMs: number): Promise<ThrottleWindow | null> {
    return this.redisElseDatabase(async (store) => {
      const window = await store.peek(address, nowMs, windowMs);
      return window && store === this.database ? { ...window, inDatabase: true } : window;
    });
  }

  async purge(nowMs: number, windowMs: number): Promise<void> {
    // Windows counted in the database during an outage; Redis keys expire on their own.
    await this.database.purge(nowMs, windowMs);
  }

  async close(): Promise<void> {
    await this.redis.close();
  }

  /** One step on Redis unless it failed in the last few seconds; on the database when Redis cannot answer. */
  private async redisElseDatabase<T>(step: (store: SignInThrottleStore) => Promise<T>): Promise<T> {
    if (performance.now() >= this.redisRetryAt) {
      try {
        return await step(this.redis);
      } catch (error) {
        this.redisFailed(error);
      }
    }
    return step(this.database);
  }

  private redisFailed(error: unknown): void {
    this.redisRetryAt = performance.now() + REDIS_RETRY_AFTER_MS;
    // One fixed text, so the logger counts repeats instead of writing a line per sign-in.
    this.logger.warn(`Redis cannot count sign-ins (${(error as Error).name}); counting them in the database until it answers`);
  }
}
