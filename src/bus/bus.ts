import { EventEmitter } from 'node:events';

/** A connection or Sentinel event of the Redis client, for the capture queues to record. */
export interface BusConnectionEvent {
  kind: 'connection' | 'sentinel';
  eventName: string;
  endpoint: string;
  message: string | null;
  occurredDate: Date;
}

export type BusHandler = (message: string) => void;

/** Connection events kept until the first listener (a start that fails over and over stays bounded). */
const EARLY_EVENTS = 100;

/**
 * Publish/subscribe port shared by every node: API key changes, logout stream closures, watcher
 * and service-change events. Delivery is reliable but not guaranteed (service.md 5.1), so every
 * consumer also has a fallback (reload, periodic re-check).
 *
 * Events emitted on `events`:
 * - 'connection' (BusConnectionEvent): connection and Sentinel events of the Redis client;
 * - 'ready': (re)connected; consumers that cache state reload it then.
 */
export abstract class Bus {
  readonly events = new EventEmitter();

  /**
   * Publishes. Never waits beyond the broker's command deadline: a message that cannot be handed to
   * the broker now is kept (bounded) and published, in order, when the broker answers again, so it
   * resolves either way. Receivers must be idempotent (a message may arrive twice, or late).
   */
  abstract publish(channel: string, message: string): Promise<void>;

  /** False while the broker cannot be reached (readiness); an in-process bus is always connected. */
  get connected(): boolean {
    return true;
  }

  /** Subscribes; returns the function that unsubscribes. Handlers must not throw. */
  abstract subscribe(channel: string, handler: BusHandler): () => void;

  abstract close(): Promise<void>;

  /** Runs `listener` whenever the bus (re)connects, the moment to reload cached state. */
  onReady(listener: () => void): () => void {
    this.events.on('ready', listener);
    return () => this.events.off('ready', listener);
  }

  /**
   * Connection events from before anyone listened: the clients connect (and the Sentinel watch
   * subscribes) while the application is still starting, before the capture service listens.
   */
  private readonly early: BusConnectionEvent[] = [];

  /** Emits a connection event, or keeps it (bounded) for the first listener. */
  protected emitConnection(event: BusConnectionEvent): void {
    if (this.events.listenerCount('connection') > 0) this.events.emit('connection', event);
    else if (this.early.length < EARLY_EVENTS) this.early.push(event);
  }

  /** Listens to connection events; the first listener also receives those kept from the start. */
  onConnectionEvent(listener: (event: BusConnectionEvent) => void): () => void {
    this.events.on('connection', listener);
    for (const event of this.early.splice(0)) listener(event);
    return () => this.events.off('connection', listener);
  }
}

/** Channels of the bus (contract 5 and 11). */
export const CHANNELS = {
  apiKeySet: 'ApiKeySet',
  apiKeyRemove: 'ApiKeyRemove',
  watcher: 'Watcher',
  serviceChange: 'ServiceChange',
  sessionEnded: 'SessionEnded',
} as const;
