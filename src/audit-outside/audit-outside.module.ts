import { Module } from '@nestjs/common';
import { AfterListening } from '../common/after-listening';
import { AuditLogModule } from '../audit-log/audit-log.module';
import { AuditOutsideController } from './audit-outside.controller';
import { AuditOutsideRepository } from './audit-outside.repository';
import { AuditOutsideScheduler } from './audit-outside.scheduler';
import { AuditOutside } from './audit-outside.service';

/**
 * No row outside the log (contract 18): the check, its hourly job and the adoption. Above both the log
 * (audit-log/, whose sealer adopts the rows) and the administrative changes (admin-changes/, which
 * record the adoption), so that neither of those imports the other back (docs/decisions/0027).
 */
@Module({
  imports: [AuditLogModule],
  controllers: [AuditOutsideController],
  providers: [AfterListening, AuditOutsideRepository, AuditOutside, AuditOutsideScheduler],
})
export class AuditOutsideModule {}
