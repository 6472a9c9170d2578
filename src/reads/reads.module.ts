import { Module } from '@nestjs/common';
import { GridReads } from './grid-read.service';
import { ReadEngine } from './read-engine.service';

/** The one read engine behind every grid; each feature describes its own tables (audit/, telemetry/). */
@Module({
  providers: [ReadEngine, GridReads],
  exports: [ReadEngine, GridReads],
})
export class ReadsModule {}
