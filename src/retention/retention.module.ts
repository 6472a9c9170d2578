import { Module } from '@nestjs/common';
import { AfterListening } from '../common/after-listening';
import { SinkRetentionGate } from '../sinks/sink-retention-gate';
import { SinksModule } from '../sinks/sinks.module';
import { AuditRetentionRunWriter } from './audit-retention-run.writer';
import { AuditDropGate, AuditRetentionRecorder, PartitionMaintenance } from './partition-maintenance.service';
import { PartitionRepository } from './partition.repository';
import { RetentionController } from './retention.controller';
import { RetentionScheduler } from './retention.scheduler';

/**
 * Retention without deletes (contract 16): partitions of the audit and telemetry tables made ahead,
 * and whole partitions past retention dropped. Written to by nobody; it only acts on the tables.
 */
@Module({
  imports: [SinksModule],
  controllers: [RetentionController],
  providers: [AfterListening, PartitionRepository, PartitionMaintenance, RetentionScheduler, { provide: AuditRetentionRecorder, useClass: AuditRetentionRunWriter }, { provide: AuditDropGate, useExisting: SinkRetentionGate }],
  exports: [PartitionMaintenance],
})
export class RetentionModule {}
