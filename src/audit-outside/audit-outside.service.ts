import { Injectable, Logger } from '@nestjs/common';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { adoptedRowsText } from '../admin-changes/changes';
import { badRequest, conflict, ProblemError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/problem';
import { Transactions } from '../database/transactions';
import { AuditOutsideRepository, OUTSIDE_PAGE, OutsideDeadlineError, OutsideRow } from './audit-outside.repository';
import { AuditSealer } from '../audit-log/audit-sealer.service';
import { SEALED_TABLES, isSealedTable } from '../audit-log/canonical';

/** A row id an adoption may name: 0 to the largest bigint (a leaf holds no negative Id), decimal without leading zeros. */
const ID = /^(0|[1-9]\d{0,18})$/;
const MAX_ROW_ID = 2n ** 63n - 1n;

type Outside = { total: number; rows: OutsideRow[] };

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

  /** The check running now, if any. */
  private running: Promise<Outside> | null = null;
  /** The check that starts when the running one ends, shared by every call that arrived meanwhile. */
  private queued: Promise<Outside> | null = null;

  /**
   * One check at a time, and each call answered by a check that started after it arrived: a call while
   * one runs waits for the next, which every call arriving meanwhile shares. Joining the running check
   * instead would answer sooner but could miss a row slipped in after that check read its range (a
   * verifier run right after the tampering, during the check at start); two checks at once would each
   * read every table and, on a loaded machine, both miss the route's deadline. A check runs under the
   * job's deadline whoever started it; a route stops waiting at its own and the check goes on for
   * the calls after it.
   */
  private shared(): Promise<Outside> {
    if (this.queued) return this.queued;
    if (this.running) {
      const queued = this.running.then(
        () => undefined,
        () => undefined,
      ).then(() => {
        this.queued = null;
        return this.start();
      });
      queued.catch(() => undefined);
      this.queued = queued;
      return queued;
    }
    return this.start();
  }

  private start(): Promise<Outside> {
    const check = this.outside.find(OUTSIDE_JOB_DEADLINE_MS).finally(() => {
      if (this.running === check) this.running = null;
    });
    // A route that stopped waiting leaves nobody to take a failure: handled here, seen by the callers still waiting.
    check.catch(() => undefined);
    this.running = check;
    return check;
  }

  /** The route's check: 503 with Retry-After, never 500, when it cannot finish within its deadline. */
  async find(): Promise<Outside> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OutsideDeadlineError(OUTSIDE_ROUTE_DEADLINE_MS)), OUTSIDE_ROUTE_DEADLINE_MS);
    });
    try {
      return await Promise.race([this.shared(), late]);
    } catch (error) {
      if (!(error instanceof OutsideDeadlineError)) throw error;
      throw new ProblemError(503, 'Service Unavailable', 'The check for rows outside the log did not finish in time; try again shortly.', {
        headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
      });
    } finally {
      clearTimeout(timer);
    }
  }

  /** The check the scheduler runs at start and hourly: an ERROR with the count, and the first row, while any exist. */
  async check(): Promise<number> {
    const { total, rows } = await this.shared();
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
    if (ids.some((id) => typeof id !== 'string' || !ID.test(id) || BigInt(id) > MAX_ROW_ID)) {
      throw badRequest('rowIds: each must be a whole number from 0 to 9223372036854775807 (a negative Id cannot be sealed).', [{ field: 'rowIds', message: 'whole numbers, 0 or more' }]);
    }
    await this.transactions.runChange(async (tx) => {
      const unsealed = new Set(await this.outside.unsealed(table, ids as string[], tx));
      const refused = (ids as string[]).filter((id) => !unsealed.has(id));
      if (refused.length > 0) {
        // A second row under a sealed row's Id (another date), or one under a leaf outside the signed
        // tree: outside the log, named by the check, but no adoption can seal it (one leaf per Id).
        const twins = await this.outside.underAnotherLeaf(table, refused, tx);
        if (twins.length > 0) {
          throw conflict(
            `Cannot be adopted: ${table} ${twins.length === 1 ? 'row' : 'rows'} ${twins.slice(0, 10).join(', ')} ${twins.length === 1 ? 'shares its Id' : 'share their Ids'} ` +
              `with a leaf of another row (a sealed row with another date, or a leaf outside the signed tree), and the log holds one leaf per Id. ` +
              `Such a row was written behind the log: remove it and let the verifier judge the rest (docs/decisions/0031-admin-changes.md).`,
          );
        }
        throw badRequest(`Not a row outside the log that can be sealed (no such row, sealed already, a date no canonical form holds: infinite or outside years 0000-9999, or a row stored in a table inheriting from this one): ${refused.slice(0, 10).join(', ')}.`, [{ field: 'rowIds', message: 'each must name a row outside the log' }]);
      }
      const shared = await this.outside.sharedIds(table, [...unsealed], tx);
      if (shared.length > 0) {
        throw conflict(
          `Cannot be adopted: ${table} ${shared.length === 1 ? 'Id' : 'Ids'} ${shared.slice(0, 10).join(', ')} ${shared.length === 1 ? 'names' : 'name'} more than one row (other dates), ` +
            `and the log holds one leaf per Id: which row would be sealed is chance. Remove the rows that do not belong, then adopt (docs/decisions/0031-admin-changes.md).`,
        );
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
