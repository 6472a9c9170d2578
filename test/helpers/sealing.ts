import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditSealer } from '../../src/audit-log/audit-sealer.service';
import { run } from '../../src/audit-log/verify/main';
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

/** `npm run audit:verify` against a running service, in-process: its exit code and every line it printed. */
export async function verifyService(url: string, apiKey: string): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const code = await run(['--url', url, '--api-key', apiKey], (l) => out.push(l), (l) => out.push(l));
  return { code, out };
}
