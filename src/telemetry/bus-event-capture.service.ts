import { Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { Bus, BusConnectionEvent } from '../bus/bus';
import { CaptureQueues } from './capture-queues.service';

/**
 * Captures the Redis client's connection events (reconnects) and the Sentinels' events (a master
 * down, a failover, the new master: src/bus/sentinel-watch.ts) into their queues, so an operator can
 * line them up with gaps in the other telemetry.
 */
@Injectable()
export class BusEventCapture implements OnModuleInit, OnModuleDestroy {
  private unsubscribe: (() => void) | null = null;

  constructor(
    private readonly bus: Bus,
    private readonly queues: CaptureQueues,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.onConnectionEvent((event) => this.capture(event));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  capture(event: BusConnectionEvent): void {
    const queue = event.kind === 'sentinel' ? this.queues.redisSentinelEvents : this.queues.redisConnectionEvents;
    queue.enqueue({ occurredDate: event.occurredDate, eventName: event.eventName, endpoint: event.endpoint, message: event.message });
  }
}
