import { Module } from '@nestjs/common';
import { SessionsModule } from '../sessions/sessions.module';
import { StreamController } from './stream.controller';
import { StreamRegistry } from './stream-registry.service';
import { StreamsScheduler } from './streams.scheduler';

/**
 * The live Server-Sent Event streams (contract 11): Watcher and ServiceChange, relayed from the bus to
 * each caller within its scope, cut when the caller's session or API key ends. Depends on sessions (it
 * follows their ends), never the other way.
 */
@Module({
  imports: [SessionsModule],
  controllers: [StreamController],
  providers: [StreamRegistry, StreamsScheduler],
})
export class StreamsModule {}
