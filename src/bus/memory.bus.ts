import { Bus, BusHandler } from './bus';

/** In-process bus for a single node (RedisConnectionString unset). Delivery is asynchronous like Redis. */
export class MemoryBus extends Bus {
  private readonly handlers = new Map<string, Set<BusHandler>>();

  async publish(channel: string, message: string): Promise<void> {
    const handlers = this.handlers.get(channel);
    if (!handlers) return;
    for (const handler of [...handlers]) {
      queueMicrotask(() => handler(message));
    }
  }

  subscribe(channel: string, handler: BusHandler): () => void {
    let set = this.handlers.get(channel);
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    return () => set!.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
