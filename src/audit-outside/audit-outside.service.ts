import { Injectable, Logger } from '@nestjs/common';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { adoptedRowsText } from '../admin-changes/changes';
import { badRequest, ProblemError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/problem';
import { Transactions } from '../database/transactions';
import { AuditOutsideRepository, OUTSIDE_PAGE, OutsideDeadlineError, OutsideRow } from './audit-outside.repository';
import { AuditSealer } from '../audit-log/audit-sealer.service';
import { SEALED_TABLES, isSealedTable } from '../audit-log/canonical';

const ID = /^[1-9]\d{0,17}$/;

/** The route's deadline for the whole check (contract 18: an answer within 10 s); a miss is 503. */
export const OUTSIDE_ROUTE_DEADLINE_MS = 9_000;
/** The hourly check's deadline: nobody waits for it, so it may take longer; a miss is logged. */
export const OUTSIDE_JOB_DEADLINE_MS = 120_000;

/**
 * No row outside the log (contract 18): finds the rows of the sealed tables that are neither leaves
 * nor waiting (inserted with the triggers bypassed, or their waiting entry removed) or that have waited
 * more than a minute; says so at ERROR while any exist; and adopts rows an operator names, as new
 * leaves, with an AdminChange RowsAdopted of its own in the same transaction.
 */
@Injectable()
export class AuditOutside {
  private readonly logger = new Logger('AuditLog');

  constructor(
    private readonly outside: AuditOutsideRepository,
    private readonly transactions: Transactions,
    private readonly adminChanges: AdminChangeRecorder,
    private readonly sealer: AuditSealer,
  ) {}

  /** The route's check: 503 with Retry-After, never 500, when it cannot finish within its deadline. */
  async find(): Promise<{ total: number; rows: OutsideRow[] }> {
    try {
      return await this.outside.find(OUTSIDE_ROUTE_DEADLINE_MS);
    } catch (error) {
      if (!(error instanceof OutsideDeadlineError)) throw error;
      throw new ProblemError(503, 'Service Unavailable', 'The check for rows outside the log did not finish in time; try again shortly.', {
        headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    }
  }

  /** The check the scheduler runs at start and hourly: an ERROR with the count, and the first row, while any exist. */
  async check(): Promise<number> {
    const { total, rows } = await this.outside.find(OUTSIDE_JOB_DEADLINE_MS);
    if (total > 0) {
      const first = rows[0];
      this.logger.error(`${total} audit rows are outside the log (first: ${first.table} row ${first.rowId}, ${first.reason}); see GET /api/Audit/Outside`);
    }
    return total;
  }

  /**
   * Seals the named rows of `table` as new leaves. Every id must name a row of the table that has no
   * leaf (else 400, nothing adopted); the RowsAdopted row commits with their entries, then the sealer
   * runs, so the answer comes once they are leaves.
   */
  async adopt(actor: AdminActor, table: unknown, rowIds: unknown): Promise<{ adopted: number; treeSize: number | null }> {
    if (!isSealedTable(table)) throw badRequest(`table: expected one of ${SEALED_TABLES.join(', ')}.`, [{ field: 'table', message: `one of ${SEALED_TABLES.join(', ')}` }]);
    if (!Array.isArray(rowIds) || rowIds.length === 0 || rowIds.length > OUTSIDE_PAGE) {
      throw badRequest('rowIds: expected 1 to 1000 row ids.', [{ field: 'rowIds', message: 'an array of 1 to 1000 row ids' }]);
    }
    const ids = [...new Set(rowIds.map((id) => (typeof id === 'number' ? String(id) : id)))];
    if (ids.some((id) => typeof id !== 'string' || !ID.test(id))) throw badRequest('rowIds: each must be a positive whole number.', [{ field: 'rowIds', message: 'positive whole numbers' }]);
    await this.transactions.runChange(async (tx) => {
      const unsealed = new Set(await this.outside.unsealed(table, ids as string[], tx));
      const refused = (ids as string[]).filter((id) => !unsealed.has(id));
      if (refused.length > 0) {
        throw badRequest(`Not outside the log (no such row, or sealed already): ${refused.slice(0, 10).join(', ')}.`, [{ field: 'rowIds', message: 'each must name a row outside the log' }]);
      }
      const sorted = [...unsealed].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
      await this.outside.enqueue(table, sorted, tx);
      await this.adminChanges.record(tx, actor, {
        actionType: ActionTypeId.RowsAdopted,
        targetTable: table,
        targetId: null,
        targetName: null,
        targetTenantRegistryId: null,
        changes: adoptedRowsText(sorted.map((id) => [table, id] as const)),
      });
    });
    this.logger.warn(`${ids.length} ${table} rows adopted into the log by ${actor.principal.userName}`);
    const outcomes = await this.sealer.sealPending();
    const last = outcomes.filter((o) => o.treeSize !== null).at(-1);
    return { adopted: ids.length, treeSize: last?.treeSize ?? null };
  }
}
