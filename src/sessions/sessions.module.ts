import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { LogoutController } from './logout.controller';
import { LogoutService } from './logout.service';
import { RevokeTokensController } from './revoke-tokens.controller';
import { SessionController } from './session.controller';
import { SessionRetention, SessionRetentionScheduler } from './session-retention.service';
import { SessionRevocation } from './session-revocation.service';
import { StreamController } from './stream.controller';
import { StreamRegistry } from './stream-registry.service';
import { UserSession } from './user-session.entity';
import { UserSessionRepository } from './user-session.repository';
import { OwnSessionsController, UserSessionsController } from './user-sessions.controller';
import { UserSessions } from './user-sessions.service';

/**
 * Session lifetime: the caller's session, the UserSession rows (listed and ended one at a time),
 * revocation, logout, the streams cut with them, and the purge of ended rows.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserSession]), RegistryTablesModule],
  controllers: [SessionController, OwnSessionsController, UserSessionsController, LogoutController, RevokeTokensController, StreamController],
  providers: [
    UserSessionRepository,
    SessionRevocation,
    UserSessions,
    SessionRetention,
    SessionRetentionScheduler,
    LogoutService,
    StreamRegistry,
  ],
  exports: [SessionRevocation, UserSessionRepository, SessionRetention],
})
export class SessionsModule {}
