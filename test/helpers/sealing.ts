import type { INestApplication } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { AUDIT_SEAL_LOCK_KEY, AuditSealer } from '../../src/audit-log/audit-sealer.service';
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

/**
 * Runs `work` while the test holds the seal lock (on its own connection to the database at `url`), so
 * the one-second job of any node seals none of the rows written meanwhile: what a test needs when it
 * asserts the log's size across several requests that each write an audit row.
 */
export async function holdingSealLock(url: string, work: () => Promise<void>): Promise<void> {
  const holder = new Client({ connectionString: url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1)', [AUDIT_SEAL_LOCK_KEY]);
    await work();
  } finally {
    await holder.query('ROLLBACK');
    await holder.end();
  }
}
