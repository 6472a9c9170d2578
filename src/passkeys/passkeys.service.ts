import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import type { Principal } from '../access/principal';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { ChangeSide, changesText } from '../admin-changes/changes';
import { Clock } from '../common/clock';
import { badRequest, notFound, ProblemError } from '../common/problem';
import { boundText } from '../common/text';
import { Transactions } from '../database/transactions';
import { TargetUsers } from '../users/target-users';
import { ChallengePurpose } from './passkey-challenge.entity';
import { PasskeyCeremonies } from './passkey-ceremonies';
import { PasskeyChallenges } from './passkey-challenges';
import { CreatedPasskeyDto, PasskeyDto } from './passkeys.dto';
import { PASSKEYS_PER_USER, UserPasskeyRepository } from './user-passkey.repository';
import type { UserPasskey } from './user-passkey.entity';

/** Registering a passkey needs a sign-in at most this old (contract 20). */
export const REAUTHENTICATION_WINDOW_MS = 5 * 60_000;

/**
 * A user's passkeys (contract 20): registration (after a recent sign-in, the challenge bound to the
 * session), the list, rename and removal, for the user themself and for administrators within their
 * tenant scope. Registration and removal each run in one transaction with their AdminChange row
 * (contract 18, ActionTypeId 19 / 20, TargetTable UserPasskey): both commit or neither does.
 */
@Injectable()
export class Passkeys {
  constructor(
    private readonly passkeys: UserPasskeyRepository,
    private readonly challenges: PasskeyChallenges,
    private readonly ceremonies: PasskeyCeremonies,
    private readonly targets: TargetUsers,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  /** Creation options for the caller, the challenge bound to the caller's session. */
  async registrationOptions(caller: Principal, remoteIp: string | null): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const sessionId = this.requireRecentSignIn(caller);
    const { challenge } = await this.challenges.issue(ChallengePurpose.Registration, remoteIp, { id: sessionId });
    return this.ceremonies.registrationOptions({ id: caller.userRegistryId, name: caller.userName }, challenge);
  }

  /** Registers the passkey the browser created under this session's challenge. */
  async register(actor: AdminActor, name: string, response: unknown): Promise<CreatedPasskeyDto> {
    const caller = actor.principal;
    const sessionId = this.requireRecentSignIn(caller);
    const cleanName = passkeyName(name);
    const challenge = await this.challenges.consume(sessionId, ChallengePurpose.Registration);
    const verified = await this.ceremonies.verifyRegistration(response, challenge);
    const created = await this.transactions.runChange(async (tx) => {
      const row = await this.passkeys.create({ ...verified, userRegistryId: caller.userRegistryId, name: cleanName, createdDate: this.clock.now() }, tx);
      if (row) await this.record(tx, actor, ActionTypeId.PasskeyRegistered, row, caller.tenantRegistryId, null, changed(row));
      return row;
    });
    if (!created) {
      throw badRequest(`The passkey was not accepted: it is already registered, or the account holds ${PASSKEYS_PER_USER} passkeys.`);
    }
    return {
      id: created.id,
      name: created.name,
      createdDate: created.createdDate.toISOString(),
      backupEligible: created.backupEligible,
      backedUp: created.backedUp,
      aaguid: created.aaguid,
    };
  }

  async listOwn(caller: Principal): Promise<PasskeyDto[]> {
    return (await this.passkeys.listActive(caller.userRegistryId)).map(toDto);
  }

  async rename(caller: Principal, id: number, name: string): Promise<PasskeyDto> {
    const renamed = await this.passkeys.rename(caller.userRegistryId, id, passkeyName(name));
    if (!renamed) throw notFound();
    return toDto(renamed);
  }

  async removeOwn(actor: AdminActor, id: number): Promise<void> {
    const { principal } = actor;
    await this.remove(actor, { id: principal.userRegistryId, tenantRegistryId: principal.tenantRegistryId }, id);
  }

  /** An administrator's view of a user's passkeys (permission 35, tenant scope of contract 6). */
  async listOf(caller: Principal, userRegistryId: number): Promise<PasskeyDto[]> {
    const target = await this.targets.find(caller, userRegistryId);
    return (await this.passkeys.listActive(target.id)).map(toDto);
  }

  async removeOf(actor: AdminActor, userRegistryId: number, id: number): Promise<void> {
    const target = await this.targets.find(actor.principal, userRegistryId);
    await this.remove(actor, target, id);
  }

  private async remove(actor: AdminActor, owner: { id: number; tenantRegistryId: number }, id: number): Promise<void> {
    const removed = await this.transactions.runChange(async (tx) => {
      const row = await this.passkeys.remove(owner.id, id, this.clock.now(), tx);
      if (row) await this.record(tx, actor, ActionTypeId.PasskeyRemoved, row, owner.tenantRegistryId, changed(row), null);
      return row;
    });
    if (!removed) throw notFound();
  }

  /** The AdminChange row of a registration or removal (contract 18, 20), in its transaction. */
  private async record(
    tx: EntityManager,
    actor: AdminActor,
    actionType: ActionTypeId,
    passkey: Pick<UserPasskey, 'id' | 'name'>,
    ownerTenantRegistryId: number,
    before: ChangeSide,
    after: ChangeSide,
  ): Promise<void> {
    await this.adminChanges.record(tx, actor, {
      actionType,
      targetTable: 'UserPasskey',
      targetId: passkey.id,
      targetName: passkey.name,
      targetTenantRegistryId: ownerTenantRegistryId,
      changes: changesText(before, after),
    });
  }

  /**
   * The caller's session id, when its sign-in (any scheme, with its factors: a session exists only
   * after them) is at most 5 minutes old; an API key never counts as one. Else 403
   * ReauthenticationRequired.
   */
  private requireRecentSignIn(caller: Principal): string {
    const start = caller.sessionStartDate?.getTime();
    const age = start === undefined ? Infinity : this.clock.nowMs() - start;
    if (caller.authenticationType === 'ApiKey' || !caller.sessionId || !(age <= REAUTHENTICATION_WINDOW_MS)) {
      throw new ProblemError(403, 'Forbidden', 'Sign in again (within the last 5 minutes) to register a passkey.', { code: 'ReauthenticationRequired' });
    }
    return caller.sessionId;
  }
}

/** A name as stored: control characters removed, 1 to 64 characters. */
function passkeyName(name: string): string {
  const clean = (boundText(name, 1000) ?? '').trim();
  if (clean.length === 0 || Array.from(clean).length > 64) {
    throw badRequest('The name is not valid.', [{ field: 'name', message: 'name must be 1 to 64 characters (control characters are removed).' }]);
  }
  return clean;
}

/**
 * What a passkey's AdminChange row shows of it: what its owner sees in the list, never its key
 * material (public key, credential id) nor its counter.
 */
function changed(row: Pick<UserPasskey, 'userRegistryId' | 'name' | 'backupEligible' | 'backedUp' | 'aaguid'>): ChangeSide {
  return { userRegistryId: row.userRegistryId, name: row.name, backupEligible: row.backupEligible, backedUp: row.backedUp, aaguid: row.aaguid };
}

function toDto(row: UserPasskey): PasskeyDto {
  return {
    id: row.id,
    name: row.name,
    createdDate: row.createdDate.toISOString(),
    lastUsedDate: row.lastUsedDate?.toISOString() ?? null,
    lastUsedDevice: row.lastUsedUserAgent,
    backupEligible: row.backupEligible,
    backedUp: row.backedUp,
  };
}
