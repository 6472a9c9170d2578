import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AnonymousLogoutEntry } from './anonymous-logout.entity';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { SessionTablesModule } from '../session-store/session-tables.module';
import { LogoutController } from './logout.controller';
import { AnonymousLogoutLimiter } from './anonymous-logout.limiter';
import { AnonymousLogoutRepository } from './anonymous-logout.repository';
import { LogoutService } from './logout.service';
import { RevokeTokensController } from './revoke-tokens.controller';
import { SessionController } from './session.controller';
import { SessionRetention } from '../session-store/session-retention.service';
import { SessionsScheduler } from './sessions.scheduler';
import { SessionRevocation } from '../session-store/session-revocation.service';
import { OwnSessionsController, UserSessionsController } from './user-sessions.controller';
import { UserSessions } from './user-sessions.service';

/**
 * Session lifetime: the caller's session, the UserSession rows (listed and ended one at a time),
 * revocation, logout, and the purge of ended rows. The live streams that end with a session are
 * StreamsModule's (src/streams), which listens to SessionRevocation; nothing here knows them.
 */
@Module({
  imports: [SessionTablesModule, RegistryTablesModule, TypeOrmModule.forFeature([AnonymousLogoutEntry])],
  controllers: [SessionController, OwnSessionsController, UserSessionsController, LogoutController, RevokeTokensController],
  providers: [
    SessionRevocation,
    UserSessions,
    SessionRetention,
    LogoutService,
    AnonymousLogoutRepository,
    AnonymousLogoutLimiter,
    SessionsScheduler,
  ],
  exports: [SessionRevocation, SessionTablesModule, SessionRetention],
})
export class SessionsModule {}
