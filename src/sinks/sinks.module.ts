import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditLogModule } from '../audit-log/audit-log.module';
import { SecuritySink } from './security-sink.entity';
import { SecuritySinkRepository } from './security-sink.repository';
import { SecuritySinksController } from './security-sinks.controller';
import { SecuritySinks } from './security-sinks.service';
import { SinkDeliverer } from './sink-deliverer.service';
import { SinkFeed } from './sink-feed';
import { SinkRetentionGate } from './sink-retention-gate';

/**
 * Security events leave the building (contract 19; docs/decisions/0027): every sealed leaf of the
 * audit log delivered to each SIEM sink, in order, at least once. Reads the log (audit-log), never
 * writes it; retention asks it which leaves the active sinks still owe.
 */
@Module({
  imports: [TypeOrmModule.forFeature([SecuritySink]), AuditLogModule],
  controllers: [SecuritySinksController],
  providers: [SecuritySinkRepository, SinkFeed, SinkDeliverer, SecuritySinks, SinkRetentionGate],
  exports: [SinkRetentionGate],
})
export class SinksModule {}
