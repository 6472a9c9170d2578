import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { SessionTablesModule } from '../session-store/session-tables.module';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { AccessGuard } from './access.guard';
import { Authenticator } from './authenticator.service';
import { CsrfGuard } from './csrf.guard';
import { SessionCookies } from './cookies';
import { JwtVerifier } from './jwt-verifier';
import { SessionActivityScheduler } from './session-activity.scheduler';
import { SessionActivityWriter } from './session-activity.writer';
import { SlidingRefresh } from './sliding-refresh';
import { TokenService } from './token.service';
import { UserStateReader } from './user-state.reader';

/**
 * Request authentication: the global CSRF guard, then the global deny-by-default guard, and the
 * credential strategies. The
 * ApiKeyValidator token is bound by the global ApiKeysModule (its in-memory set of active keys).
 */
@Global()
@Module({
  // The guard's per-request read lives in the UserRegistry repository; LastSeenDate in UserSession's.
  imports: [RegistryTablesModule, SessionTablesModule],
  providers: [
    TokenService,
    SessionCookies,
    UserStateReader,
    SessionActivityWriter,
    SessionActivityScheduler,
    JwtVerifier,
    Authenticator,
    SlidingRefresh,
    // Global guards run in the order they are provided: the CSRF rule first, so a request it refuses
    // is never authenticated, refreshed or recorded (docs/decisions/0015).
    { provide: APP_GUARD, useClass: CsrfGuard },
    { provide: APP_GUARD, useClass: AccessGuard },
  ],
  exports: [TokenService, SessionCookies, UserStateReader, SessionActivityWriter, Authenticator, JwtVerifier, SlidingRefresh],
})
export class GuardModule {}
