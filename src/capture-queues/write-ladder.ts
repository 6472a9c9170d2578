import type { Logger } from '@nestjs/common';
import { messageOf } from '../common/errors';
import { isDatabaseUnavailable } from '../database/deadlines';
import type { Transactions } from '../database/transactions';
import type { TablePart } from './capture-source';
import type { HealthRow } from './health-backlog';

/**
 * True when the database refused what an entry holds (SQLSTATE class 22 data exception or 23
 * integrity constraint), or the driver could not send it: that entry's fault, not the table's.
 */
function entryAtFault(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return /^2[23]/.test(code);
    current = (current as { driverError?: unknown; cause?: unknown }).driverError ?? (current as { cause?: unknown }).cause;
  }
  return !isDatabaseUnavailable(error);
}

/** How the ladder ended: `outage` when the database could no longer be reached (those parts were not written). */
export interface LadderResult {
  ok: boolean;
  outage?: { unwritten: TablePart[]; error: unknown };
}

/**
 * The fallback after the database refused a flush's one batch: each table is written on its own, so
 * one table's trouble holds back no other; a table refused for what its entries hold is retried entry
 * by entry, and an entry refused alone is set aside, logged at ERROR and counted as dropped in its
 * queue's row of this minute (`health`); a table refused for any other reason keeps its entries for
 * the next flush. Fills `written` and `setAside` per table.
 */
export class WriteLadder {
  constructor(
    private readonly transactions: Transactions,
    private readonly logger: Logger,
  ) {}

  async write(parts: TablePart[], health: HealthRow[], written: Record<string, number>, setAside: Record<string, number>): Promise<LadderResult> {
    let ok = true;
    for (let i = 0; i < parts.length; i++) {
      const p = parts[i];
      written[p.table] = 0;
      if (p.entries.length === 0) continue;
      let batchError: unknown;
      try {
        written[p.table] = await this.transactions.run((tx) => p.insert(tx, p.entries));
        continue;
      } catch (error) {
        if (isDatabaseUnavailable(error)) return { ok: false, outage: { unwritten: parts.slice(i), error } };
        batchError = error;
      }
      if (!entryAtFault(batchError)) {
        // The table itself (missing, no permission, a lock timeout): its entries wait for the next flush.
        p.restore(p.entries);
        ok = false;
        this.logger.error(`capture flush: ${p.table} could not be written, its entries are kept for the next flush: ${messageOf(batchError)}`);
        continue;
      }
      for (let k = 0; k < p.entries.length; k++) {
        try {
          written[p.table] += await this.transactions.run((tx) => p.insert(tx, [p.entries[k]]));
        } catch (error) {
          if (isDatabaseUnavailable(error)) {
            p.restore(p.entries.slice(k));
            return { ok: false, outage: { unwritten: parts.slice(i + 1), error } };
          }
          if (!entryAtFault(error)) {
            p.restore(p.entries.slice(k));
            ok = false;
            this.logger.error(`capture flush: ${p.table} could not be written, its entries are kept for the next flush: ${messageOf(error)}`);
            break;
          }
          setAside[p.table] = (setAside[p.table] ?? 0) + 1;
          if (p.queueId !== null) {
            const row = health.find((h) => h.queueId === p.queueId);
            if (row) row.droppedCount++;
          }
          this.logger.error(`capture flush: a ${p.table} entry was refused by the database and is set aside (counted as dropped): ${messageOf(error)}`);
        }
      }
    }
    return { ok };
  }
}
