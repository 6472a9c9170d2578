import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditCheckpointRepository } from './audit-checkpoint.repository';
import { AuditLeafRepository } from './audit-leaf.repository';
import { AUDIT_LOG_ENTITIES } from './audit-log.entities';
import { AuditLogController } from './audit-log.controller';
import { AuditLogService } from './audit-log.service';
import { AuditPendingRepository } from './audit-pending.repository';
import { AuditRetentionRunRepository } from './audit-retention-run.repository';
import { AuditSealScheduler } from './audit-seal.scheduler';
import { AuditSealer } from './audit-sealer.service';
import { AuditSigner } from './audit-signer';
import { AuditTreeRepository } from './audit-tree.repository';
import { AuditedRowsRepository } from './audited-rows.repository';

/**
 * The tamper-evident log beside the audit trails (contract 15; docs/decisions/0019): the sealer that
 * turns committed rows into leaves and signed checkpoints, and the routes that serve them. Reads the
 * audit tables, never writes them; nothing calls into it.
 */
@Module({
  imports: [TypeOrmModule.forFeature(AUDIT_LOG_ENTITIES)],
  controllers: [AuditLogController],
  providers: [
    AuditLeafRepository,
    AuditCheckpointRepository,
    AuditPendingRepository,
    AuditTreeRepository,
    AuditRetentionRunRepository,
    AuditedRowsRepository,
    AuditSigner,
    AuditSealer,
    AuditSealScheduler,
    AuditLogService,
  ],
  exports: [AuditSealer, AuditLeafRepository, AuditCheckpointRepository, AuditedRowsRepository, AuditSigner],
})
export class AuditLogModule {}
