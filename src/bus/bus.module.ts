import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Bus } from './bus';
import { MemoryBus } from './memory.bus';
import { RedisBus } from './redis.bus';

/** The publish/subscribe port: Redis when RedisConnectionString is set, in-process otherwise. */
@Global()
@Module({
  providers: [
    {
      provide: Bus,
      inject: [SETTINGS],
      useFactory: (settings: AppSettings): Bus =>
        settings.redisConnectionString
          ? new RedisBus(settings.redisConnectionString, {
              channelPrefix: settings.redisChannelPrefix,
              commandTimeoutMs: settings.redisCommandTimeoutMs,
            })
          : new MemoryBus(),
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
