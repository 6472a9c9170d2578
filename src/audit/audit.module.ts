import { Global, Module } from '@nestjs/common';
import { AuditWriter } from './audit.writer';

/** The permanent sign-in and sign-out trails. Written to by login and sessions; never calls back. */
@Global()
@Module({ providers: [AuditWriter], exports: [AuditWriter] })
export class AuditModule {}
