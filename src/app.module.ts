import { DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { AdminChangesModule } from './admin-changes/admin-changes.module';
import { ApiKeysModule } from './api-keys/api-keys.module';
import { AuditModule } from './sign-in-trail/audit.module';
import { AuditLogModule } from './audit-log/audit-log.module';
import { AuditOutsideModule } from './audit-outside/audit-outside.module';
import { GuardModule } from './guard/guard.module';
import { BusModule } from './bus/bus.module';
import { Clock } from './common/clock';
import { AppSettings } from './config/config.module';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { LoginModule } from './login/login.module';
import { MfaModule } from './mfa/mfa.module';
import { ReadsModule } from './reads/reads.module';
import { RetentionModule } from './retention/retention.module';
import { SessionsModule } from './sessions/sessions.module';
import { SinksModule } from './sinks/sinks.module';
import { StreamsModule } from './streams/streams.module';
import { TelemetryModule } from './telemetry/telemetry.module';
import { UsersModule } from './user-admin/users.module';
import { WebModule } from './web/web.module';

@Module({})
export class AppModule {
  static forRoot(settings: AppSettings, clock?: Clock): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(settings, clock),
        ScheduleModule.forRoot(),
        DatabaseModule,
        BusModule,
        AuditModule,
        AuditLogModule,
        AuditOutsideModule,
        GuardModule,
        AdminChangesModule,
        ApiKeysModule,
        MfaModule,
        UsersModule,
        SessionsModule,
        StreamsModule,
        LoginModule,
        ReadsModule,
        TelemetryModule,
        RetentionModule,
        SinksModule,
        WebModule,
        HealthModule,
      ],
    };
  }
}
