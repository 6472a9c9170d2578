import { ArgumentsHost, ExceptionFilter, Logger, UseFilters } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthenticatedRequest } from '../access/principal';
import { ProblemFilter, serviceUnavailable, toProblem } from '../common/problem';
import { isDatabaseUnavailable } from '../database/deadlines';
import { adminActor, AdminChangeRecorder, AdminChangeTarget } from './admin-change.recorder';
import { ActionTypeId, AdminChangeTargetTable } from './admin-change.types';

/** Where the express app keeps this app's recorder for the refusal filters (set by AdminChangesModule). */
export const RECORDER_LOCAL = 'tm:adminChangeRecorder';

/** The statuses of a write refused because the caller may not make it (contract 18): 403, or 404 for a target outside its tenant. */
const REFUSED: readonly number[] = [403, 404];
const ID = /^[1-9]\d{0,17}$/;

/** The target table of a refused write: fixed for a route, or read from the request (an adoption names its table in the body). */
export type RefusedTargetTable = AdminChangeTargetTable | ((req: Request) => AdminChangeTargetTable);

interface RefusalSpec {
  actionType: ActionTypeId;
  targetTable: RefusedTargetTable;
  /** The path parameter naming the target's id; none for a creation or a session (TargetId null). */
  idParam?: string;
  /** The statuses recorded as refusals; a table without tenants (a sink) answers 404 only for a target that does not exist. */
  refused: ReadonlySet<number>;
}

/**
 * Records a refused write of the route (contract 18): when the guard (403: no permission, not a
 * landlord) or the service (403: escalation; 404: a target outside the caller's tenant) refuses an
 * authenticated caller, an AdminChange row with Failed true, Changes `{}`, TargetName null and
 * TargetId from the path is written before the problem is answered. A 400, 401 or 409 writes nothing.
 * A route-scoped exception filter, because only a filter also sees what the global guard throws.
 */
class AdminRefusalFilter implements ExceptionFilter {
  private readonly logger = new Logger('AdminChange');
  private readonly problems = new ProblemFilter(isDatabaseUnavailable);

  constructor(private readonly spec: RefusalSpec) {}

  async catch(exception: unknown, host: ArgumentsHost): Promise<void> {
    if (host.getType() === 'http') {
      const req = host.switchToHttp().getRequest<Request & AuthenticatedRequest>();
      const { problem } = toProblem(exception, isDatabaseUnavailable);
      const recorder = req.app?.locals?.[RECORDER_LOCAL] as AdminChangeRecorder | undefined;
      if (this.spec.refused.has(problem.status) && req.principal && recorder) {
        const raw = this.spec.idParam ? req.params?.[this.spec.idParam] : undefined;
        const target: AdminChangeTarget = {
          actionType: this.spec.actionType,
          targetTable: typeof this.spec.targetTable === 'function' ? this.spec.targetTable(req) : this.spec.targetTable,
          targetId: typeof raw === 'string' && ID.test(raw) ? raw : null,
        };
        try {
          await recorder.recordRefused(adminActor(req.principal, req), target);
        } catch (error) {
          // Fail closed: a refusal that cannot be recorded is answered as an outage, never silently.
          this.logger.error(`could not record a refused ${target.targetTable} change: ${(error as Error).message}`);
          exception = serviceUnavailable('The refusal could not be recorded; try again shortly.');
        }
      }
    }
    this.problems.catch(exception, host);
  }
}

/**
 * Marks a write route of the registry (contract 18): its refusals are recorded as failed AdminChange
 * rows. Its successful changes are recorded by its service, in the change's transaction.
 */
export function RecordsAdminChange(actionType: ActionTypeId, targetTable: RefusedTargetTable, idParam?: string, refused: readonly number[] = REFUSED) {
  return UseFilters(new AdminRefusalFilter({ actionType, targetTable, idParam, refused: new Set(refused) }));
}
