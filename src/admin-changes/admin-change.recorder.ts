import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { EntityManager } from 'typeorm';
import type { Principal } from '../access/principal';
import { Clock } from '../common/clock';
import { requestContext, RequestContext } from '../common/request-context';
import { BOUNDS, boundText } from '../common/text';
import { AdminChangeRepository, NewAdminChange } from './admin-change.repository';
import { ActionTypeId, AdminChangeTargetTable, CredentialTypeId } from './admin-change.types';

/** Who made a change, and from where: the signed-in caller and its request. */
export interface AdminActor {
  principal: Principal;
  context: RequestContext;
}

/** What a row names of its actor: a signed-in caller, or (the first sign-in's forced change) the user signing in. */
export interface RecordedActor {
  principal: Pick<Principal, 'userRegistryId' | 'userName' | 'tenantRegistryId' | 'authenticationType' | 'sessionId' | 'apiKeyDisplay'>;
  context: RequestContext;
}

/** The actor of a request, for the recorder. */
export function adminActor(principal: Principal, req: Request): AdminActor {
  return { principal, context: requestContext(req) };
}

/** What a change was done to (contract 18). */
export interface AdminChangeTarget {
  actionType: ActionTypeId;
  targetTable: AdminChangeTargetTable;
  /** The target's id; null for a session (named by TargetName) or an adoption. */
  targetId: number | string | null;
}

/** A change made: its target, the target's name and tenant, and the Changes text (changes.ts). */
export interface AdminChangeEntry extends AdminChangeTarget {
  targetName: string | null;
  /** The tenant the target belongs to (a tenant: itself). */
  targetTenantRegistryId: number | null;
  /** The Changes text, built by changesText or adoptedRowsText (changes.ts). */
  changes: string;
}

const CREDENTIAL_OF: Record<Principal['authenticationType'], CredentialTypeId> = {
  ApiKey: CredentialTypeId.ApiKey,
  Bearer: CredentialTypeId.Bearer,
  Cookie: CredentialTypeId.Cookie,
};

/**
 * Writes AdminChange rows for the routes that change the registry (contract 18). `changeRow` gives the
 * row to a change that inserts it in the same statement as the change (database/recorded-change.ts);
 * otherwise `record` runs inside the change's own transaction (opened with Transactions.runChange, which marks it so the
 * registry triggers do not record it a second time): both commit or neither does, and the caller
 * answers after the commit. `recordRefused` writes the row of a write refused because the caller may
 * not make it (403, or 404 for a target outside its tenant): Failed true, Changes `{}`, TargetName null.
 * Every text is stripped of control characters and bounded here.
 */
@Injectable()
export class AdminChangeRecorder {
  constructor(
    private readonly rows: AdminChangeRepository,
    private readonly clock: Clock,
  ) {}

  async record(tx: EntityManager, actor: RecordedActor, entry: AdminChangeEntry): Promise<void> {
    await this.rows.insert(this.row(actor, entry, false), tx);
  }

  /**
   * The row `record` would insert, for a change that inserts it in its own statement (the registry's
   * changes by compare-and-set, database/recorded-change.ts): same bounds, same actor, same clock.
   */
  changeRow(actor: RecordedActor, entry: AdminChangeEntry): NewAdminChange {
    return this.row(actor, entry, false);
  }

  /**
   * The row of a registry member change whose statement renders its Changes from the row it locked
   * (database/recorded-change.ts `change`): `changeRow` without Changes.
   */
  memberChangeRow(actor: RecordedActor, entry: Omit<AdminChangeEntry, 'changes'>): Omit<NewAdminChange, 'changes'> {
    const row: Partial<NewAdminChange> = this.row(actor, { ...entry, changes: '' }, false);
    delete row.changes;
    return row as Omit<NewAdminChange, 'changes'>;
  }

  async recordRefused(actor: RecordedActor, target: AdminChangeTarget): Promise<void> {
    await this.rows.insert(this.row(actor, { ...target, targetName: null, targetTenantRegistryId: null, changes: '{}' }, true));
  }

  private row(actor: RecordedActor, entry: AdminChangeEntry, failed: boolean): NewAdminChange {
    const { principal, context } = actor;
    const credentialTypeId = CREDENTIAL_OF[principal.authenticationType];
    const credentialId = credentialTypeId === CredentialTypeId.ApiKey ? principal.apiKeyDisplay : principal.sessionId;
    return {
      createdDate: this.clock.now(),
      createdUser: boundText(principal.userName, BOUNDS.name),
      userRegistryId: principal.userRegistryId,
      tenantRegistryId: principal.tenantRegistryId,
      credentialTypeId,
      credentialId: boundText(credentialId, 64),
      actionTypeId: entry.actionType,
      targetTable: entry.targetTable,
      targetId: entry.targetId === null ? null : String(entry.targetId),
      targetName: boundText(entry.targetName, BOUNDS.name),
      targetTenantRegistryId: entry.targetTenantRegistryId,
      failed,
      changes: entry.changes,
      remoteIp: boundText(context.remoteIp, BOUNDS.ip),
      localIp: boundText(context.localIp, BOUNDS.ip),
      userAgent: boundText(context.userAgent, BOUNDS.userAgent),
    };
  }
}
