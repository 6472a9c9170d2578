import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UserSession } from './user-session.entity';
import { UserSessionRepository } from './user-session.repository';

/**
 * The UserSession table (contract 14): its entity and repository, in a module of their own so the
 * guard (guard/: LastSeenDate) and sign-in (login/) use them without importing SessionsModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserSession])],
  providers: [UserSessionRepository],
  exports: [UserSessionRepository],
})
export class SessionTablesModule {}
