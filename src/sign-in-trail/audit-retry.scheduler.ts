import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { AuditWriter } from './audit.writer';

/** How often rows kept during an outage are tried again. */
export const AUDIT_RETRY_INTERVAL_MS = 5_000;

/** Thin on purpose: tests call AuditWriter.writeKept() directly. */
@Injectable()
export class AuditRetryScheduler implements BeforeApplicationShutdown {
  constructor(private readonly audit: AuditWriter) {}

  @Interval('audit-retry', AUDIT_RETRY_INTERVAL_MS)
  async tick(): Promise<void> {
    await this.audit.writeKept();
  }

  /** One last try before the database connection closes; what still cannot be written is logged. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.audit.writeKept();
    this.audit.reportUnwritten();
  }
}
