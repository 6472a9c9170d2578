import { Module } from '@nestjs/common';
import { GridReads } from './grid-read.service';
import { ReadEngine } from './read-engine.service';
import { ReadLimits } from './read-limits';

/** The one read engine behind every grid; each feature describes its own tables (audit/, telemetry/). */
@Module({
  providers: [ReadEngine, ReadLimits, GridReads],
  exports: [ReadEngine, GridReads],
})
export class ReadsModule {}
