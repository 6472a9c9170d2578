import { Logger } from '@nestjs/common';
import Redis, { RedisOptions } from 'ioredis';
import { Bus, BusConnectionEvent, BusHandler } from './bus';

/**
 * Parses `redis://…`, `rediss://…` or `sentinel://host:port,host:port/mastername` into ioredis options.
 * Credentials in the URL are passed to ioredis and never logged.
 */
export function redisOptions(connectionString: string): { options: RedisOptions; endpoint: string } {
  if (connectionString.startsWith('sentinel://')) {
    const rest = connectionString.slice('sentinel://'.length);
    const slash = rest.indexOf('/');
    const hosts = (slash >= 0 ? rest.slice(0, slash) : rest).split(',').filter(Boolean);
    const name = slash >= 0 ? decodeURIComponent(rest.slice(slash + 1)) : 'mymaster';
    const sentinels = hosts.map((h) => {
      const at = h.lastIndexOf('@');
      const hostPort = at >= 0 ? h.slice(at + 1) : h;
      const [host, port] = hostPort.split(':');
      return { host, port: Number(port || 26379) };
    });
    return { options: { sentinels, name }, endpoint: `sentinel:${sentinels.map((s) => `${s.host}:${s.port}`).join(',')}/${name}` };
  }
  const url = new URL(connectionString);
  const options: RedisOptions = {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    tls: url.protocol === 'rediss:' ? {} : undefined,
  };
  return { options, endpoint: `${url.hostname}:${options.port}` };
}

/**
 * Redis adapter: one connection publishes, one subscribes. The publisher has no offline queue, so a
 * publish while Redis is down fails at once instead of hanging a request; consumers fall back to
 * their periodic reloads.
 */
export class RedisBus extends Bus {
  private readonly logger = new Logger('RedisBus');
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly handlers = new Map<string, Set<BusHandler>>();
  private readonly endpoint: string;

  constructor(connectionString: string) {
    super();
    const { options, endpoint } = redisOptions(connectionString);
    this.endpoint = endpoint;
    const common: RedisOptions = {
      ...options,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      retryStrategy: (times) => Math.min(100 * times, 2000),
    };
    this.publisher = new Redis({ ...common, enableOfflineQueue: false, connectionName: 'tm-publisher' });
    this.subscriber = new Redis({ ...common, connectionName: 'tm-subscriber' });
    this.watch(this.publisher, 'publisher');
    this.watch(this.subscriber, 'subscriber');
    this.subscriber.on('message', (channel: string, message: string) => {
      for (const handler of this.handlers.get(channel) ?? []) handler(message);
    });
    this.subscriber.on('ready', () => this.events.emit('ready'));
  }

  private watch(client: Redis, role: string): void {
    const emit = (eventName: string, message: string | null, kind: BusConnectionEvent['kind'] = 'connection') => {
      const event: BusConnectionEvent = { kind, eventName, endpoint: this.endpoint, message, occurredDate: new Date() };
      this.events.emit('connection', event);
    };
    client.on('connect', () => emit('connect', role));
    client.on('ready', () => emit('ready', role));
    client.on('close', () => emit('close', role));
    client.on('reconnecting', (delay: number) => emit('reconnecting', `${role} in ${delay} ms`));
    client.on('end', () => emit('end', role));
    client.on('error', (error: Error) => {
      this.logger.warn(`redis ${role}: ${error.message}`);
      emit('error', `${role}: ${error.message}`);
    });
    // Emitted by ioredis when it is pointed at a new master through Sentinel.
    client.on('+switch-master', (...args: unknown[]) => emit('+switch-master', args.map(String).join(' '), 'sentinel'));
    client.on('failover', () => emit('failover', role, 'sentinel'));
  }

  async publish(channel: string, message: string): Promise<void> {
    await this.publisher.publish(channel, message);
  }

  subscribe(channel: string, handler: BusHandler): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      this.handlers.set(channel, (set = new Set()));
      this.subscriber.subscribe(channel).catch((error: Error) => this.logger.warn(`subscribe ${channel}: ${error.message}`));
    }
    set.add(handler);
    return () => set!.delete(handler);
  }

  async close(): Promise<void> {
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }
}
