import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import type { RedisOptions, SentinelConnectionOptions, SentinelConnector } from 'ioredis';
import { createHash } from 'node:crypto';
import { withinDeadline } from '../common/deadline';
import { describeRedisTarget, parseRedisConnectionString, RedisTarget } from '../config/redis-connection-string';
import { Bus, BusConnectionEvent, BusHandler } from './bus';
import { ioredis } from './ioredis';
import { SentinelWatch } from './sentinel-watch';
import { messageOf } from '../common/errors';

let rewindingConnector: (new (options: unknown) => SentinelConnector) | null = null;

/**
 * ioredis keeps its place in the Sentinel list from one connection to the next, and only its
 * failover detector (off here: one per client, with connections of its own to every Sentinel and
 * unhandled errors when one is down) rewinds it. Without the rewind, the reconnect after a lost
 * master starts past the Sentinel that last answered, reaches the end of the list and reports "All
 * sentinels are unreachable. Retrying from scratch" though none was asked. This connector rewinds at
 * every connection, the Sentinel that answered last first (SentinelWatch does the detecting, once per
 * node).
 */
export function rewindingSentinelConnector(): new (options: unknown) => SentinelConnector {
  rewindingConnector ??= class RewindingSentinelConnector extends ioredis().SentinelConnector {
    /** ioredis passes the client's whole options (ConnectorConstructor takes `unknown`). */
    constructor(options: unknown) {
      super(options as SentinelConnectionOptions);
    }

    private connectedBefore = false;

    override connect(eventEmitter: Parameters<SentinelConnector['connect']>[0]): ReturnType<SentinelConnector['connect']> {
      // The first time, the list as written (a reset that moves "the current one" would move the last).
      this.sentinelIterator.reset(this.connectedBefore);
      this.connectedBefore = true;
      return super.connect(eventEmitter);
    }
  };
  return rewindingConnector;
}

/**
 * ioredis options for RedisConnectionString (src/config/redis-connection-string.ts, checked at start),
 * and the endpoint that logs and telemetry rows show: addresses and master name, never credentials.
 * Deadlines are the caller's (RedisBus, failFastRedis): they set `commandTimeout` and, for Sentinels,
 * `sentinelCommandTimeout`.
 */
export function redisOptions(connectionString: string): { options: RedisOptions; endpoint: string; target: RedisTarget } {
  const target = parseRedisConnectionString(connectionString);
  if ('problem' in target) throw new Error(`RedisConnectionString: ${target.problem}`);
  const endpoint = describeRedisTarget(target);
  if (target.kind === 'redis') {
    const options: RedisOptions = {
      host: target.address.host,
      port: target.address.port,
      username: target.username ?? undefined,
      password: target.password ?? undefined,
      db: target.db,
      tls: target.tls ? {} : undefined,
    };
    return { options, endpoint, target };
  }
  const options: RedisOptions = {
    sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: target.masterName,
    username: target.username ?? undefined,
    password: target.password ?? undefined,
    sentinelUsername: target.sentinelUsername ?? undefined,
    sentinelPassword: target.sentinelPassword ?? undefined,
    db: target.db,
    Connector: rewindingSentinelConnector(),
    // A replica that was master until a failover answers writes with READONLY: ask the Sentinels again.
    reconnectOnError: (error) => /^READONLY/.test(error.message),
    ...(target.tls ? { tls: {}, sentinelTLS: {}, enableTLSForSentinelMode: true } : {}),
  };
  return { options, endpoint, target };
}

/**
 * The start of every key a per-address rule keeps in a shared Redis (sign-in throttle, anonymous
 * logout): RedisChannelPrefix, then the hash of the deployment's database identity
 * (database.module.ts, DATABASE_IDENTITY), so nodes of one deployment count together whatever address
 * they reach the database by, and two deployments on one Redis never count each other's requests.
 */
export function redisKeyNamespace(channelPrefix: string, databaseIdentity: string): string {
  return `${channelPrefix}${createHash('sha256').update(databaseIdentity).digest('hex').slice(0, 16)}`;
}

/**
 * A connection for one atomic counter of a per-address rule (sign-in throttle, anonymous logout):
 * no offline queue and one retry, so a command fails at once while Redis is down and within
 * `commandTimeoutMs` while it is silent; the caller decides what a failure means. Connection errors
 * are left to the commands (the bus already records Redis events).
 */
export function failFastRedis(connectionString: string, connectionName: string, commandTimeoutMs: number): Redis {
  const client = new (ioredis().default)({
    ...redisOptions(connectionString).options,
    connectionName,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: commandTimeoutMs,
    sentinelCommandTimeout: commandTimeoutMs,
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  client.on('error', () => undefined);
  return client;
}

/** True when the connection's socket goes to `host:port` (IPv6 in brackets, IPv4-mapped read as IPv4). */
export function connectedTo(client: Redis, address: string): boolean {
  const socket = client.stream as { remoteAddress?: string; remotePort?: number } | undefined;
  if (!socket?.remoteAddress || !socket.remotePort) return false;
  const host = socket.remoteAddress.replace(/^::ffff:(?=\d+\.)/, '');
  return `${host.includes(':') ? `[${host}]` : host}:${socket.remotePort}` === address;
}

export interface RedisBusOptions {
  /** Prefix of every channel name (RedisChannelPrefix): deployments sharing one Redis stay apart. */
  channelPrefix?: string;
  /** Bound on one command (publish, heartbeat PING) and on connecting (RedisCommandTimeoutMilliseconds). */
  commandTimeoutMs?: number;
  /** Messages kept while Redis cannot be reached. */
  outboxCapacity?: number;
  /** Interval of the heartbeat PING on both connections. */
  heartbeatMs?: number;
}

/** Messages kept for publication while Redis cannot be reached; beyond this the newest are dropped and counted. */
export const OUTBOX_CAPACITY = 10_000;
/** A PING on each connection this often finds a connection that is open but no longer answers. */
export const HEARTBEAT_MS = 5_000;

interface Outgoing {
  channel: string;
  message: string;
}

/**
 * Redis adapter: one connection publishes, one subscribes.
 *
 * Every wait has a deadline. A refused Redis fails fast by itself; a stalled or partitioned one would
 * not (the socket stays open, TCP keeps retrying), so connecting and every command are bounded, and a
 * heartbeat PING on both connections reconnects a connection that stopped answering: the subscriber
 * would otherwise wait silently for messages that never come. The publisher has no offline queue of
 * its own; a message it cannot hand over in time goes to a bounded outbox, published in order when
 * the publisher is ready again, and the request that published it never waits longer than one
 * command deadline. Receivers have their own fallbacks meanwhile (reload every minute, re-check).
 */
export class RedisBus extends Bus {
  private readonly logger = new Logger('RedisBus');
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  /** Handlers by channel name as this service knows it (without the prefix). */
  private readonly handlers = new Map<string, Set<BusHandler>>();
  private readonly endpoint: string;
  private readonly prefix: string;
  private readonly commandTimeoutMs: number;
  private readonly outboxCapacity: number;
  private readonly outbox: Outgoing[] = [];
  /** Messages dropped because the outbox was full, since the start. */
  private outboxDropped = 0;
  private draining: Promise<void> | null = null;
  private readonly heartbeat: NodeJS.Timeout;
  /** A connection found unresponsive by a deadline is reconnected; this keeps the state until it is ready again. */
  private readonly unresponsive = new Set<Redis>();
  private closed = false;
  /** Sentinel mode: the one node-wide watch of the Sentinels' event channels. */
  private readonly sentinelWatch: SentinelWatch | null = null;

  constructor(connectionString: string, options: RedisBusOptions = {}) {
    super();
    const { options: target, endpoint, target: parsed } = redisOptions(connectionString);
    this.endpoint = endpoint;
    this.prefix = options.channelPrefix ?? '';
    this.commandTimeoutMs = options.commandTimeoutMs ?? 2_000;
    this.outboxCapacity = options.outboxCapacity ?? OUTBOX_CAPACITY;
    const common: RedisOptions = {
      ...target,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(100 * times, 2000),
      connectTimeout: this.commandTimeoutMs,
      sentinelCommandTimeout: this.commandTimeoutMs,
      keepAlive: 10_000,
    };
    this.publisher = new (ioredis().default)({ ...common, enableOfflineQueue: false, commandTimeout: this.commandTimeoutMs, connectionName: 'tm-publisher' });
    this.subscriber = new (ioredis().default)({ ...common, connectionName: 'tm-subscriber' });
    this.watch(this.publisher, 'publisher');
    this.watch(this.subscriber, 'subscriber');
    this.subscriber.on('message', (channel: string, message: string) => {
      if (!channel.startsWith(this.prefix)) return;
      for (const handler of this.handlers.get(channel.slice(this.prefix.length)) ?? []) handler(message);
    });
    this.subscriber.on('ready', () => this.events.emit('ready'));
    this.publisher.on('ready', () => void this.drain());
    if (parsed.kind === 'sentinel') {
      this.sentinelWatch = new SentinelWatch(parsed, {
        commandTimeoutMs: this.commandTimeoutMs,
        onEvent: (event) => this.emitConnection(event),
        onSwitch: (newMaster) => this.followSwitch(newMaster),
      });
      this.sentinelWatch.start();
    }
    this.heartbeat = setInterval(() => {
      void this.ping(this.publisher, 'publisher');
      void this.ping(this.subscriber, 'subscriber');
      void this.sentinelWatch?.ping();
    }, options.heartbeatMs ?? HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** The heartbeat's timer, for the owner to list as a named job (bus.module.ts: `redis-heartbeat`). */
  get heartbeatTimer(): NodeJS.Timeout {
    return this.heartbeat;
  }

  override get connected(): boolean {
    return (
      this.publisher.status === 'ready' &&
      this.subscriber.status === 'ready' &&
      !this.unresponsive.has(this.publisher) &&
      !this.unresponsive.has(this.subscriber)
    );
  }

  /** Messages waiting in the outbox, and how many were dropped because it was full. */
  get pending(): { queued: number; dropped: number } {
    return { queued: this.outbox.length, dropped: this.outboxDropped };
  }

  private watch(client: Redis, role: string): void {
    const emit = (eventName: string, message: string | null, kind: BusConnectionEvent['kind'] = 'connection') => {
      const event: BusConnectionEvent = { kind, eventName, endpoint: this.endpoint, message, occurredDate: new Date() };
      this.emitConnection(event);
    };
    client.on('connect', () => emit('connect', role));
    client.on('ready', () => {
      this.unresponsive.delete(client);
      emit('ready', role);
    });
    client.on('close', () => emit('close', role));
    client.on('reconnecting', (delay: number) => emit('reconnecting', `${role} in ${delay} ms`));
    client.on('end', () => emit('end', role));
    client.on('error', (error: Error) => {
      this.logger.warn(`redis ${role}: ${error.message}`);
      emit('error', `${role}: ${error.message}`);
    });
    // Sentinel mode: one Sentinel of the list could not name the master (the next one is asked).
    client.on('sentinelError', (error: Error) => {
      this.logger.warn(`redis ${role}: ${error.message}`);
      emit('sentinelError', `${role}: ${error.message}`, 'sentinel');
    });
  }

  /**
   * The Sentinels named a new master (`host:port`): a connection still open to another Redis asks
   * them again now. Those that lost the old master are already doing so; this moves those still
   * connected to it (alive but demoted, as after a partition), which would otherwise publish where
   * nobody listens any more. One already on the new master is left alone.
   */
  private followSwitch(newMaster: string): void {
    if (this.closed) return;
    for (const client of [this.publisher, this.subscriber]) {
      if (client.status === 'ready' && !connectedTo(client, newMaster)) client.disconnect(true);
    }
  }

  async publish(channel: string, message: string): Promise<void> {
    const outgoing = { channel: this.prefix + channel, message };
    // Behind messages already waiting (order), or while the publisher is known not to be ready: keep it.
    if (this.outbox.length > 0 || !this.publisherReady()) {
      this.keep(outgoing);
      return;
    }
    try {
      await this.publisher.publish(outgoing.channel, outgoing.message);
    } catch (error) {
      this.keep(outgoing);
      this.suspect(this.publisher, 'publisher', error);
    }
  }

  subscribe(channel: string, handler: BusHandler): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      this.handlers.set(channel, (set = new Set()));
      this.subscriber
        .subscribe(this.prefix + channel)
        .catch((error: Error) => this.logger.warn(`subscribe ${this.prefix + channel}: ${error.message}`));
    }
    set.add(handler);
    return () => set!.delete(handler);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.heartbeat);
    this.sentinelWatch?.close();
    if (this.outbox.length > 0) this.logger.warn(`closing with ${this.outbox.length} unpublished messages`);
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }

  private publisherReady(): boolean {
    return this.publisher.status === 'ready' && !this.unresponsive.has(this.publisher);
  }

  private keep(outgoing: Outgoing): void {
    if (this.outbox.length >= this.outboxCapacity) {
      this.outboxDropped++;
      this.logger.error(`Redis outbox full (${this.outboxCapacity} messages): a message to ${outgoing.channel} was dropped`);
      return;
    }
    this.outbox.push(outgoing);
    if (this.outbox.length === 1) this.logger.warn('Redis cannot take messages now: keeping them to publish when it answers again');
  }

  /** Publishes the outbox in order; stops at the first failure (the rest waits for the next ready). */
  private drain(): Promise<void> {
    if (this.draining) return this.draining;
    // Yield first: the `finally` below must not run before `draining` is assigned.
    this.draining = (async () => {
      await Promise.resolve();
      try {
        let sent = 0;
        while (this.outbox.length > 0 && this.publisherReady() && !this.closed) {
          const next = this.outbox[0];
          try {
            await this.publisher.publish(next.channel, next.message);
          } catch (error) {
            this.suspect(this.publisher, 'publisher', error);
            return;
          }
          this.outbox.shift();
          sent++;
        }
        if (sent > 0) this.logger.warn(`Redis answers again: published ${sent} kept messages`);
      } finally {
        this.draining = null;
      }
    })();
    return this.draining;
  }

  /** One PING within the command deadline; a connection that does not answer is reconnected. */
  private async ping(client: Redis, role: string): Promise<void> {
    if (client.status !== 'ready' || this.closed) return;
    try {
      await withinDeadline(client.ping(), this.commandTimeoutMs, 'no answer to PING');
      if (client === this.publisher && this.outbox.length > 0) void this.drain();
    } catch (error) {
      this.suspect(client, role, error);
    }
  }

  /**
   * A command on this connection failed. A timeout means the connection is open but nothing answers
   * (a stall, a partition): it is dropped and reconnected, so the next commands fail fast (the
   * publisher) or the subscriptions are renewed (the subscriber) instead of waiting on a dead socket.
   */
  private suspect(client: Redis, role: string, error: unknown): void {
    const message = messageOf(error);
    if (!/timed out|no answer/i.test(message) || this.closed || this.unresponsive.has(client)) return;
    this.unresponsive.add(client);
    this.logger.warn(`redis ${role}: ${message}; reconnecting`);
    client.disconnect(true);
  }
}
