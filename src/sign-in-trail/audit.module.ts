import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReadsModule } from '../reads/reads.module';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { AuditReadsController } from './audit-reads.controller';
import { AuditRetryScheduler } from './audit-retry.scheduler';
import { AuditWriter } from './audit.writer';
import { UserLogin } from './user-login.entity';
import { UserLoginRepository } from './user-login.repository';
import { UserLogout } from './user-logout.entity';
import { UserLogoutRepository } from './user-logout.repository';

/**
 * The permanent sign-in and sign-out trails: their repositories and writer, and their reads (described in audit.tables.ts
 * for the one read engine). Written to by login and sessions; never calls back.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserLogin, UserLogout]), RegistryTablesModule, ReadsModule],
  controllers: [AuditReadsController],
  providers: [UserLoginRepository, UserLogoutRepository, AuditWriter, AuditRetryScheduler],
  exports: [AuditWriter],
})
export class AuditModule {}
