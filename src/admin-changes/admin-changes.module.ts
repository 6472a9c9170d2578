import { Global, Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ReadsModule } from '../reads/reads.module';
import { RECORDER_LOCAL } from './admin-change-refusals';
import { AdminChange } from './admin-change.entity';
import { AdminChangeRecorder } from './admin-change.recorder';
import { AdminChangeRepository } from './admin-change.repository';
import { AdminChangesController } from './admin-changes.controller';

/**
 * Administrative changes (contract 18): the recorder every registry write calls inside its own
 * transaction, and the read. Written to, never calls back (like audit/).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AdminChange]), ReadsModule],
  controllers: [AdminChangesController],
  providers: [AdminChangeRepository, AdminChangeRecorder],
  exports: [AdminChangeRecorder],
})
export class AdminChangesModule implements OnModuleInit {
  constructor(
    private readonly adapter: HttpAdapterHost,
    private readonly recorder: AdminChangeRecorder,
  ) {}

  /** The refusal filters (admin-change-refusals.ts) find this app's recorder on the express app. */
  onModuleInit(): void {
    const app = this.adapter.httpAdapter?.getInstance?.() as { locals?: Record<string, unknown> } | undefined;
    if (app?.locals) app.locals[RECORDER_LOCAL] = this.recorder;
  }
}
