import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditSealer } from '../../src/audit-log/audit-sealer.service';
import { eventually } from './eventually';

/**
 * Seals until no row waits (AuditPending empty), as the one-second job would, within `ms`: what a test
 * does before it asks the log (contract 15) about rows it has just written.
 */
export async function sealAllPending(app: INestApplication, ms?: number): Promise<void> {
  const db = app.get(DataSource);
  await eventually(async () => {
    await app.get(AuditSealer).sealPending();
    const [{ n }] = (await db.query(`SELECT count(*)::int AS n FROM "AuditPending"`)) as { n: number }[];
    return n === 0;
  }, ms);
}
