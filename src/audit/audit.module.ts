import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReadsModule } from '../reads/reads.module';
import { AuditReadsController } from './audit-reads.controller';
import { AuditRetryScheduler } from './audit-retry.scheduler';
import { AuditWriter } from './audit.writer';
import { UserLogin } from './user-login.entity';
import { UserLogout } from './user-logout.entity';

/**
 * The permanent sign-in and sign-out trails: their writer, and their reads (described in audit.tables.ts
 * for the one read engine). Written to by login and sessions; never calls back.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserLogin, UserLogout]), ReadsModule],
  controllers: [AuditReadsController],
  providers: [AuditWriter, AuditRetryScheduler],
  exports: [AuditWriter],
})
export class AuditModule {}
