import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Bus } from './bus';
import { MemoryBus } from './memory.bus';
import { RedisBus } from './redis.bus';

/** Named interval of the Redis connections' heartbeat PING in the scheduler registry. */
export const REDIS_HEARTBEAT_JOB = 'redis-heartbeat';

/** The publish/subscribe port: Redis when RedisConnectionString is set, in-process otherwise. */
@Global()
@Module({
  providers: [
    {
      provide: Bus,
      inject: [SETTINGS, SchedulerRegistry],
      useFactory: (settings: AppSettings, scheduler: SchedulerRegistry): Bus => {
        if (!settings.redisConnectionString) return new MemoryBus();
        const bus = new RedisBus(settings.redisConnectionString, {
          channelPrefix: settings.redisChannelPrefix,
          commandTimeoutMs: settings.redisCommandTimeoutMs,
        });
        // The heartbeat PING is the connection's own timer; listed with the other background work.
        scheduler.addInterval(REDIS_HEARTBEAT_JOB, bus.heartbeatTimer);
        return bus;
      },
    },
  ],
  exports: [Bus],
})
export class BusModule implements OnApplicationShutdown {
  constructor(@Inject(Bus) private readonly bus: Bus) {}
  async onApplicationShutdown(): Promise<void> {
    await this.bus.close();
  }
}
