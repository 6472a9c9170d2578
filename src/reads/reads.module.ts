import { Module } from '@nestjs/common';
import { AuditReadsController } from './audit-reads.controller';
import { GridReads } from './grid-read.service';
import { ReadEngine } from './read-engine.service';
import { ReadLimits } from './read-limits';

/** The one read engine behind every grid (audit trails here, telemetry in telemetry/). */
@Module({
  controllers: [AuditReadsController],
  providers: [ReadEngine, ReadLimits, GridReads],
  exports: [ReadEngine, GridReads],
})
export class ReadsModule {}
