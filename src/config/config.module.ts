import { DynamicModule, Global, Module } from '@nestjs/common';
import { Clock, SystemClock } from '../common/clock';
import { ForegroundWork } from '../common/foreground-work';
import { Settings } from './settings';

/** Injection token of the one typed Settings object. */
export const SETTINGS = Symbol('SETTINGS');

/** Resolved settings: secrets are always present once the application is built. */
export type AppSettings = Settings & { jwtKey: string; apiHmacKey: string; auditSigningKey: string };

@Global()
@Module({})
export class ConfigModule {
  /**
   * The settings, the clock and the foreground-work gauge every other module receives; tests pass a
   * ManualClock. The gauge is here so that every module sees the one instance (issue 30).
   */
  static forRoot(settings: AppSettings, clock: Clock = new SystemClock()): DynamicModule {
    return {
      module: ConfigModule,
      providers: [
        { provide: SETTINGS, useValue: settings },
        { provide: Clock, useValue: clock },
        { provide: ForegroundWork, useValue: new ForegroundWork(clock) },
      ],
      exports: [SETTINGS, Clock, ForegroundWork],
    };
  }
}
