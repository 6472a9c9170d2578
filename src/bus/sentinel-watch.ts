import { Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { withinDeadline } from '../common/deadline';
import { formatAddress, RedisTarget } from '../config/redis-connection-string';
import { BusConnectionEvent } from './bus';
import { ioredis } from './ioredis';
import { concernsMaster, RecentEvents, SENTINEL_EVENT_CHANNELS, switchedMaster } from './sentinel-events';

type SentinelTarget = Extract<RedisTarget, { kind: 'sentinel' }>;

export interface SentinelWatchOptions {
  /** Bound on connecting to a Sentinel and on its heartbeat PING. */
  commandTimeoutMs: number;
  /** A Sentinel event (or a change of the watched Sentinel), for RedisSentinelEvent. */
  onEvent: (event: BusConnectionEvent) => void;
  /** The master was switched to `host:port`: the owner reconnects its clients that are elsewhere. */
  onSwitch: (newMaster: string) => void;
  /** The same event text within this window is recorded once. */
  repeatWindowMs?: number;
}

/** Pause before a new round after every Sentinel of the list failed, growing up to the maximum. */
const ROUND_PAUSE_MS = 1_000;
const MAX_ROUND_PAUSE_MS = 10_000;

/**
 * Watches the Sentinels' own pub/sub channels, one node-wide connection to ONE Sentinel at a time:
 * every Sentinel publishes the same failover, so subscribing to all of them would record each event
 * once per Sentinel. When the watched Sentinel fails (refused, closed, or silent past the heartbeat
 * deadline) the watch moves to the next one of the list; the same event text seen again soon after
 * a move is recorded once (RecentEvents).
 *
 * It also plays the failover detector, once per node rather than once per client: on `+switch-master`
 * the bus reconnects its clients, so they leave a master that was demoted while still reachable (a
 * partition) instead of waiting for it to fail.
 */
export class SentinelWatch {
  private readonly logger = new Logger('SentinelWatch');
  private readonly recent: RecentEvents;
  private readonly sentinels: SentinelTarget['sentinels'];
  private client: Redis | null = null;
  /** Why the watched Sentinel was left: its last error, a missed deadline, or its closing. */
  private reason = 'connection closed';
  private index = 0;
  /** Sentinels that failed in a row: a whole round of them pauses the watch before the next round. */
  private failuresInRow = 0;
  private retry: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly target: SentinelTarget,
    private readonly options: SentinelWatchOptions,
  ) {
    this.recent = new RecentEvents(options.repeatWindowMs ?? 10_000);
    this.sentinels = target.sentinels;
  }

  start(): void {
    this.watch();
  }

  /** The heartbeat: a watched Sentinel that does not answer a PING in time is left for the next. */
  async ping(): Promise<void> {
    const client = this.client;
    if (!client || client.status !== 'ready' || this.closed) return;
    try {
      await withinDeadline(client.ping(), this.options.commandTimeoutMs, 'no answer to PING');
    } catch (error) {
      if (client !== this.client) return;
      this.reason = (error as Error).message;
      client.disconnect();
    }
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.client?.disconnect();
    this.client = null;
  }

  private watch(): void {
    if (this.closed) return;
    const address = this.sentinels[this.index];
    const endpoint = formatAddress(address);
    this.reason = 'connection closed';
    const client = new (ioredis().default)({
      host: address.host,
      port: address.port,
      username: this.target.sentinelUsername ?? undefined,
      password: this.target.sentinelPassword ?? undefined,
      tls: this.target.tls ? {} : undefined,
      connectionName: 'tm-sentinel-watch',
      lazyConnect: true,
      // This watch moves to the next Sentinel itself; ioredis must not retry the same one.
      retryStrategy: () => null,
      enableReadyCheck: false,
      autoResubscribe: false,
      maxRetriesPerRequest: 0,
      connectTimeout: this.options.commandTimeoutMs,
    });
    this.client = client;
    client.on('error', (error: Error) => {
      if (client === this.client) this.reason = error.message;
    });
    client.on('message', (channel: string, message: string) => this.receive(endpoint, channel, message));
    client.once('end', () => this.lost(client, endpoint, this.reason));
    void withinDeadline(
      client.connect().then(() => client.subscribe(...SENTINEL_EVENT_CHANNELS)),
      this.options.commandTimeoutMs,
      'no answer',
    ).then(
      () => {
        if (client !== this.client) return;
        if (this.failuresInRow > 0) this.logger.log(`watching the events of Sentinel ${endpoint}`);
        this.failuresInRow = 0;
        this.record('watching', endpoint, `subscribed to the events of master ${this.target.masterName}`);
      },
      (error: Error) => {
        if (client !== this.client) return;
        this.reason = error.message;
        client.disconnect();
      },
    );
  }

  private lost(client: Redis, endpoint: string, reason: string): void {
    if (client !== this.client || this.closed) return;
    this.client = null;
    this.failuresInRow++;
    this.index = (this.index + 1) % this.sentinels.length;
    this.record('watch-lost', endpoint, reason);
    const rounds = Math.floor(this.failuresInRow / this.sentinels.length);
    if (this.failuresInRow % this.sentinels.length === 0) {
      const pause = Math.min(ROUND_PAUSE_MS * rounds, MAX_ROUND_PAUSE_MS);
      this.logger.error(`none of the ${this.sentinels.length} Sentinels could be watched (last: ${endpoint}: ${reason}); trying again in ${pause} ms`);
      this.retry = setTimeout(() => this.watch(), pause);
      this.retry.unref();
      return;
    }
    this.logger.warn(`Sentinel ${endpoint} cannot be watched (${reason}); watching ${formatAddress(this.sentinels[this.index])}`);
    this.watch();
  }

  private receive(endpoint: string, channel: string, message: string): void {
    if (!concernsMaster(channel, message, this.target.masterName)) return;
    if (!this.recent.first(`${channel} ${message}`, Date.now())) return;
    if (channel === '+switch-master') {
      const switched = switchedMaster(message);
      if (!switched) {
        this.record(channel, endpoint, message);
        return;
      }
      this.logger.warn(`the Sentinels switched master ${this.target.masterName} from ${switched.from} to ${switched.to}`);
      this.record(channel, endpoint, `${this.target.masterName} from ${switched.from} to ${switched.to}`);
      this.options.onSwitch(switched.to);
      return;
    }
    this.record(channel, endpoint, message);
  }

  private record(eventName: string, sentinel: string, message: string): void {
    this.options.onEvent({ kind: 'sentinel', eventName, endpoint: sentinel, message, occurredDate: new Date() });
  }
}
