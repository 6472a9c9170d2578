/**
 * The pure parts of watching the Sentinels' own pub/sub channels (sentinel-watch.ts): which channels,
 * which of their messages concern this deployment's master, and forgetting repeats.
 */

/**
 * The Sentinel channels recorded in RedisSentinelEvent: a master seen down (subjectively by one
 * Sentinel, then objectively by a quorum) or back, a failover tried, a new master named, the
 * failover ended. The rest (`+sentinel`, `+slave`, `+reboot`, configuration chatter) stays out.
 */
export const SENTINEL_EVENT_CHANNELS = [
  '+sdown',
  '-sdown',
  '+odown',
  '-odown',
  '+try-failover',
  '+switch-master',
  '+failover-end',
  '+failover-end-for-timeout',
  '+convert-to-slave',
] as const;

/**
 * True when a Sentinel event is about the master named `masterName` or one of its instances: a
 * Sentinel may watch several masters. Messages are `<type> <name> <ip> <port> [@ <master> <ip> <port>]`,
 * or for `+switch-master` `<master> <old ip> <old port> <new ip> <new port>`.
 */
export function concernsMaster(channel: string, message: string, masterName: string): boolean {
  const words = message.split(' ');
  if (channel === '+switch-master') return words[0] === masterName;
  const at = words.indexOf('@');
  if (at >= 0) return words[at + 1] === masterName;
  return words[0] === 'master' && words[1] === masterName;
}

/** The old and new master of a `+switch-master` message, as `host:port` (IPv6 in brackets). */
export function switchedMaster(message: string): { from: string; to: string } | null {
  const words = message.split(' ');
  if (words.length !== 5 || !/^\d+$/.test(words[2]) || !/^\d+$/.test(words[4])) return null;
  const address = (host: string, port: string) => `${host.includes(':') ? `[${host}]` : host}:${port}`;
  return { from: address(words[1], words[2]), to: address(words[3], words[4]) };
}

/**
 * Forgets repeats: the same event text seen again within `windowMs` (the watch moved to another
 * Sentinel, which reports its own view of the same failover) is not recorded twice. Bounded: the
 * oldest entries go first.
 */
export class RecentEvents {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly windowMs: number,
    private readonly capacity = 256,
  ) {}

  /** True the first time `key` is seen within the window (then remembered), false for a repeat. */
  first(key: string, now: number): boolean {
    const last = this.seen.get(key);
    if (last !== undefined && now - last < this.windowMs) return false;
    this.seen.delete(key);
    this.seen.set(key, now);
    while (this.seen.size > this.capacity) this.seen.delete(this.seen.keys().next().value as string);
    return true;
  }
}
