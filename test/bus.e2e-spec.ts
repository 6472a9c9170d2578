import { Bus, BusConnectionEvent } from '../src/bus/bus';
import { MemoryBus } from '../src/bus/memory.bus';
import { RedisBus, redisOptions } from '../src/bus/redis.bus';
import Redis from 'ioredis';

/** Waits for `predicate`, with a deadline generous for a loaded machine (the tests assert what happens, not how fast). */
const waitFor = async (predicate: () => boolean, ms = 30_000) => {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Resolves once Redis itself counts at least `count` subscribers of each channel: a publish then reaches them. */
const subscribed = async (counts: Record<string, number>) => {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  try {
    await redis.connect();
    const end = Date.now() + 30_000;
    for (;;) {
      const answer = (await redis.pubsub('NUMSUB', ...Object.keys(counts))) as (string | number)[];
      if (Object.values(counts).every((count, i) => Number(answer[2 * i + 1]) >= count)) return;
      if (Date.now() > end) throw new Error(`Redis never counted the subscribers of ${Object.keys(counts).join(', ')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    redis.disconnect();
  }
};

describe('publish/subscribe port', () => {
  it('delivers between two Redis-backed nodes on the real Redis, and reports connection events', async () => {
    const events: BusConnectionEvent[] = [];
    const a = new RedisBus('redis://127.0.0.1:6379');
    const b = new RedisBus('redis://127.0.0.1:6379');
    a.onConnectionEvent((e) => events.push(e));
    let ready = false;
    b.onReady(() => (ready = true));
    try {
      const received: string[] = [];
      b.subscribe('tm-test-channel', (m) => received.push(m));
      await waitFor(() => ready);
      await subscribed({ 'tm-test-channel': 1 });
      await a.publish('tm-test-channel', 'hello from a');
      await waitFor(() => received.length === 1);
      expect(received).toEqual(['hello from a']);
      expect(events.map((e) => e.eventName)).toEqual(expect.arrayContaining(['connect', 'ready']));
      expect(events[0]).toMatchObject({ kind: 'connection', endpoint: '127.0.0.1:6379' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps a publish at once (no hanging request) when Redis cannot be reached', async () => {
    const bus = new RedisBus('redis://127.0.0.1:6390');
    const events: BusConnectionEvent[] = [];
    bus.onConnectionEvent((e) => events.push(e));
    try {
      const started = Date.now();
      await expect(bus.publish('x', 'y')).resolves.toBeUndefined();
      expect(Date.now() - started).toBeLessThan(1000);
      expect(bus.pending).toEqual({ queued: 1, dropped: 0 });
      expect(bus.connected).toBe(false);
      await waitFor(() => events.some((e) => e.eventName === 'error'));
    } finally {
      await bus.close();
    }
  });

  it('prefixes every channel: buses with different prefixes on one Redis do not hear each other', async () => {
    const a = new RedisBus('redis://127.0.0.1:6379', { channelPrefix: 'tm-test-a:' });
    const b = new RedisBus('redis://127.0.0.1:6379', { channelPrefix: 'tm-test-b:' });
    const plain = new RedisBus('redis://127.0.0.1:6379');
    const heard = { a: [] as string[], b: [] as string[], plain: [] as string[] };
    a.subscribe('tm-test-shared', (m) => heard.a.push(m));
    b.subscribe('tm-test-shared', (m) => heard.b.push(m));
    plain.subscribe('tm-test-a:tm-test-shared', (m) => heard.plain.push(m));
    try {
      await waitFor(() => a.connected && b.connected && plain.connected);
      await subscribed({ 'tm-test-a:tm-test-shared': 2, 'tm-test-b:tm-test-shared': 1 });
      await a.publish('tm-test-shared', 'for a');
      await waitFor(() => heard.a.length === 1 && heard.plain.length === 1);
      await new Promise((r) => setTimeout(r, 200));
      // The prefix is part of the Redis channel name; the handlers see the service's own names.
      expect(heard).toEqual({ a: ['for a'], b: [], plain: ['for a'] });
    } finally {
      await a.close();
      await b.close();
      await plain.close();
    }
  });

  it('delivers in process, and unsubscribes', async () => {
    const bus = new MemoryBus();
    const received: string[] = [];
    const off = bus.subscribe('c', (m) => received.push(m));
    await bus.publish('c', 'one');
    await waitFor(() => received.length === 1);
    off();
    await bus.publish('c', 'two');
    await new Promise((r) => setTimeout(r, 20));
    expect(received).toEqual(['one']);
  });

  it('parses Sentinel and Redis URLs without leaking credentials into the endpoint', () => {
    const sentinel = redisOptions('sentinel://:s3cret@10.0.0.1:26379,10.0.0.2:26380/mymaster?sentinelPassword=other');
    expect(sentinel.options).toMatchObject({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26380 },
      ],
      name: 'mymaster',
      password: 's3cret',
      sentinelPassword: 'other',
    });
    expect(sentinel.endpoint).toBe('sentinel:10.0.0.1:26379,10.0.0.2:26380/mymaster');
    const plain = redisOptions('redis://user:s3cret@cache:6380/2');
    expect(plain.options).toMatchObject({ host: 'cache', port: 6380, username: 'user', password: 's3cret', db: 2 });
    expect(plain.endpoint).toBe('cache:6380');
  });
});
