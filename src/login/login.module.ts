import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { redisKeyNamespace } from '../bus/redis.bus';
import { AppSettings, SETTINGS } from '../config/config.module';
import { DATABASE_IDENTITY } from '../database/database-identity';
import { PasskeysModule } from '../passkeys/passkeys.module';
import { SessionsModule } from '../sessions/sessions.module';
import { UsersModule } from '../user-admin/users.module';
import { NegotiateController } from './negotiate.controller';
import { NegotiateScheme } from './negotiate.scheme';
import { NegotiateAcceptor } from './negotiate-acceptor';
import { OAuthController } from './oauth.controller';
import { OAuthScheme } from './oauth.scheme';
import { PasskeyScheme, PasskeySignInController } from './passkey.scheme';
import { PasswordController } from './password.controller';
import { PasswordChange } from './password-change.service';
import { PasswordScheme } from './password.scheme';
import { LockoutGuard } from './lockout-guard';
import { SignInCompletion } from './sign-in-completion.service';
import { SignInFlow } from './sign-in-flow.service';
import { SignInThrottleEntry } from './sign-in-throttle.entity';
import { SignInThrottle } from './sign-in-throttle.service';
import { SignInThrottleScheduler } from './sign-in-throttle.scheduler';
import { DatabaseThrottleStore, RedisOrDatabaseThrottleStore, RedisThrottleStore, SignInThrottleStore } from './sign-in-throttle.store';

/**
 * Every sign-in scheme: its strategy (a SignInScheme that SignInFlow runs) and its routes. A new scheme
 * is one line here (docs/decisions/0023-one-sign-in-flow.md).
 */
const SCHEMES = [
  { scheme: PasswordScheme, routes: PasswordController },
  { scheme: NegotiateScheme, routes: NegotiateController },
  { scheme: OAuthScheme, routes: OAuthController },
  { scheme: PasskeyScheme, routes: PasskeySignInController },
];

/** Sign-in flows. Depends on sessions and users, never the other way. */
@Module({
  imports: [TypeOrmModule.forFeature([SignInThrottleEntry]), SessionsModule, UsersModule, PasskeysModule],
  controllers: SCHEMES.map(({ routes }) => routes),
  providers: [
    ...SCHEMES.map(({ scheme }) => scheme),
    SignInFlow,
    SignInCompletion,
    LockoutGuard,
    PasswordChange,
    NegotiateAcceptor,
    SignInThrottle,
    SignInThrottleScheduler,
    DatabaseThrottleStore,
    {
      // Redis when the nodes share one (the database while Redis cannot answer), else the database
      // they share anyway (contract 13). The Redis command deadline leaves room for the database
      // within the throttle's own deadline.
      provide: SignInThrottleStore,
      inject: [SETTINGS, DatabaseThrottleStore, DATABASE_IDENTITY],
      useFactory: (settings: AppSettings, database: DatabaseThrottleStore, databaseIdentity: string): SignInThrottleStore =>
        settings.redisConnectionString && settings.signInThrottle
          ? new RedisOrDatabaseThrottleStore(
              new RedisThrottleStore(
                settings.redisConnectionString,
                redisKeyNamespace(settings.redisChannelPrefix, databaseIdentity),
                Math.min(settings.redisCommandTimeoutMs, 1500),
              ),
              database,
            )
          : database,
    },
  ],
  exports: [SignInCompletion],
})
export class LoginModule {}
