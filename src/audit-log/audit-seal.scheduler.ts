import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { AuditSealer } from './audit-sealer.service';

/** Name of the sealing job in the scheduler registry (docs/decisions/0014). */
export const AUDIT_SEAL_JOB = 'audit-seal';

/**
 * Every AuditSealInterval, seal what waits. A named interval added at boot (the period is a setting,
 * which no decorator can carry). Thin on purpose: tests call AuditSealer.sealPending() directly.
 */
@Injectable()
export class AuditSealScheduler implements OnApplicationBootstrap {
  constructor(
    private readonly sealer: AuditSealer,
    private readonly scheduler: SchedulerRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.scheduler.addInterval(AUDIT_SEAL_JOB, setInterval(() => void this.sealer.sealPending(), this.sealer.intervalMs).unref());
  }
}
