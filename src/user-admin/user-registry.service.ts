import { Injectable, Logger } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminActor, AdminChangeEntry, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { ChangeSide, changesText } from '../admin-changes/changes';
import { LogoutReasonId } from '../sign-in-trail/audit.types';
import type { Principal } from '../access/principal';
import { Clock } from '../common/clock';
import { badRequest, conflict, FieldProblem, notFound, serviceUnavailable } from '../common/problem';
import { RequestContext } from '../common/request-context';
import { MISSED, Transactions } from '../database/transactions';
import { PasswordTransport } from '../users/password-transport';
import { SessionRevocation } from '../session-store/session-revocation.service';
import { PasswordHasher } from '../users/password-hasher.service';
import { passwordRuleProblems, wireHashProblems } from '../users/password-rules';
import { refuseEscalation, tenantScope } from '../users/registry-scope';
import { uniqueOr409 } from '../users/registry-validation';
import { RoleRegistryService } from './role-registry.service';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { UserAccounts } from '../users/user-accounts.service';
import { LockedUser, UserRegistryRepository } from '../users/user-registry.repository';
import { CreateUserDto, ResetPasswordDto, UpdateUserDto, UserDto } from './user-registry.dto';

const DUPLICATE = 'A user with this name already exists.';
/** The old password in a reset's Changes: never its value, always written as "(secret)". */
const SECRET_BEFORE = '(secret)';
const NO_USER = 'No such user.';
const NO_ROLE = 'No such role.';

/** Result of reading a password field: the value to hash, or every problem found. */
type PasswordValue = { value: string } | { problems: FieldProblem[] };

/**
 * Users of the caller's tenant (a landlord: every tenant): create, edit, unlock, deactivate, delete,
 * reset passwords. A change that must end sessions answers "done" only once they are ended: when the
 * revocation cannot be written the caller gets 503 (deactivate and delete then change nothing).
 */
@Injectable()
export class UserRegistryService {
  private readonly logger = new Logger('UserRegistry');

  constructor(
    private readonly users: UserRegistryRepository,
    private readonly transactions: Transactions,
    private readonly roles: RoleRegistryService,
    private readonly accounts: UserAccounts,
    private readonly hasher: PasswordHasher,
    private readonly transport: PasswordTransport,
    private readonly revocation: SessionRevocation,
    private readonly changes: ServiceChangePublisher,
    private readonly clock: Clock,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  list(principal: Principal): Promise<UserDto[]> {
    return this.users.findVisible(tenantScope(principal));
  }

  async get(principal: Principal, id: number): Promise<UserDto> {
    const user = await this.find(principal, id);
    if (!user) throw notFound(NO_USER);
    return user;
  }

  async create(actor: AdminActor, body: CreateUserDto): Promise<UserDto> {
    const { principal } = actor;
    const role = await this.roles.find(principal, body.roleRegistryId);
    if (!role) throw notFound(NO_ROLE);
    refuseEscalation(principal, role.permissions, 'give a user this role');
    const wire = body.wirePasswordHash ?? false;
    const password = this.readPassword(body.password, wire);
    if ('problems' in password) throw badRequest('The password is not acceptable.', password.problems);
    const hash = await this.hasher.hash(password.value);
    const mustChangePassword = body.mustChangePassword ?? false;
    const members = {
      roleRegistryId: role.id,
      name: body.name,
      email: emptyToNull(body.email),
      active: body.active ?? true,
      createdDate: this.clock.now(),
      createdUser: principal.userName,
      ...this.accounts.newPassword(hash, { wirePasswordHash: wire, mustChange: mustChangePassword }),
    };
    const after = { name: body.name, email: members.email, roleRegistryId: role.id, active: members.active, password: hash, wirePasswordHash: wire, mustChangePassword };
    // One statement inserts the user with its password and its row (TargetId: the new Id): both or neither.
    const record = this.row(actor, ActionTypeId.UserCreated, { id: null, name: body.name, tenantRegistryId: role.tenantRegistryId }, null, after)!;
    const id = await uniqueOr409(() => this.users.createRecorded(members, record), DUPLICATE);
    await this.changes.publish('UserRegistry', id, 'created');
    return this.get(principal, id);
  }

  async update(actor: AdminActor, id: number, body: UpdateUserDto): Promise<UserDto> {
    const { principal, context } = actor;
    const user = await this.editable(principal, id);
    let roleId: number | null = null;
    // The role asked for is checked whether or not it looks like the user's present one: that was read
    // before the row lock, and a concurrent change may have moved the user since.
    if (body.roleRegistryId !== undefined && body.roleRegistryId !== null) {
      const role = await this.roles.find(principal, body.roleRegistryId);
      if (!role) throw notFound(NO_ROLE);
      refuseEscalation(principal, role.permissions, 'give a user this role');
      roleId = role.id;
    }
    const deactivating = body.active === false && user.active;
    if (deactivating) {
      if (user.id === principal.userRegistryId) throw conflict('You cannot deactivate your own account.');
      await this.endSessions(principal, user, LogoutReasonId.AdministratorRevoked, context);
    }
    const members = {
      email: body.email !== undefined ? emptyToNull(body.email) : undefined,
      roleRegistryId: roleId ?? undefined,
      active: body.active ?? undefined,
      passwordLocked: body.passwordLocked ?? undefined,
    };
    // One statement locks the user, changes it and records it with the Changes rendered from the row it
    // locked (docs/decisions/0037): a concurrent change of these members is the "before", not a miss.
    // Only what the checks above relied on is compared (the user's role, and that it is not deleted);
    // when that changed the change is made under the row lock after checking again (Transactions.compareAndSet).
    const record = this.adminChanges.memberChangeRow(actor, {
      actionType: ActionTypeId.UserChanged,
      targetTable: 'UserRegistry',
      targetId: user.id,
      targetName: user.name,
      targetTenantRegistryId: user.tenantRegistryId,
    });
    await this.transactions.compareAndSet(async (tx) => {
      const current = tx ? await this.lockEditable(principal, user, tx) : user;
      return (await this.users.updateMembers(id, members, this.clock.now(), { roleRegistryId: current.roleRegistryId }, record, tx ?? undefined)) || MISSED;
    });
    await this.changes.publish('UserRegistry', id, 'updated');
    return this.get(principal, id);
  }

  /** Soft delete: the row stays for the audit trails; the name becomes free for a new user. */
  async delete(actor: AdminActor, id: number): Promise<void> {
    const { principal, context } = actor;
    const user = await this.editable(principal, id);
    if (user.id === principal.userRegistryId) throw conflict('You cannot delete your own account.');
    await this.endSessions(principal, user, LogoutReasonId.AdministratorRevoked, context);
    await this.transactions.runChange(async (tx) => {
      const current = await this.lockEditable(principal, user, tx);
      await this.users.markDeleted(id, tx);
      const before = { name: current.name, email: current.email, roleRegistryId: current.roleRegistryId, active: current.active };
      await this.record(tx, actor, ActionTypeId.UserDeleted, user, before, null);
    });
    await this.changes.publish('UserRegistry', id, 'deleted');
  }

  /**
   * An administrator's reset. The lock and the failure count are left alone (only PUT passwordLocked
   * false unlocks), so a reset cannot be used to bypass a lockout unnoticed.
   */
  async resetPassword(actor: AdminActor, id: number, body: ResetPasswordDto): Promise<void> {
    const { principal, context } = actor;
    const user = await this.editable(principal, id);
    const wire = body.wirePasswordHash ?? false;
    const password = this.readPassword(body.password, wire);
    if ('problems' in password) throw badRequest('The password is not acceptable.', password.problems);
    const hash = await this.hasher.hash(password.value);
    // The new hash first, then the cut: a sign-in with the old password can no longer start a
    // session after the revocation. If the cut fails the caller hears so (503) and can reset again.
    await this.transactions.runChange(async (tx) => {
      const current = await this.lockEditable(principal, user, tx);
      await this.accounts.setPassword(id, hash, { wirePasswordHash: wire, mustChange: body.mustChangePassword ?? true, manager: tx });
      // Whether the old one existed is not known here; a reset always replaces a secret with a secret.
      await this.record(tx, actor, ActionTypeId.PasswordSetByAdministrator, user, { password: SECRET_BEFORE, wirePasswordHash: current.wirePasswordHash }, { password: hash, wirePasswordHash: wire });
    });
    await this.changes.publish('UserRegistry', id, 'updated');
    await this.endSessions(principal, user, LogoutReasonId.PasswordChanged, context, 'The password was set, but the user\'s sessions could not be ended; reset it again.');
  }

  /** The AdminChange row of a change to user `user` (contract 18) made in one statement with it; null when nothing changed. */
  private row(actor: AdminActor, actionType: ActionTypeId, user: { id: number | null; name: string; tenantRegistryId: number }, before: ChangeSide, after: ChangeSide) {
    const entry = userChange(actionType, user, before, after);
    return entry && this.adminChanges.changeRow(actor, entry);
  }

  /** The AdminChange row of a change to user `user` (contract 18), in the change's transaction; none when nothing changed. */
  private async record(
    tx: EntityManager,
    actor: AdminActor,
    actionType: ActionTypeId,
    user: Pick<UserDto, 'id' | 'name' | 'tenantRegistryId'>,
    before: ChangeSide,
    after: ChangeSide,
  ): Promise<void> {
    const entry = userChange(actionType, user, before, after);
    if (entry) await this.adminChanges.record(tx, actor, entry);
  }

  private async find(principal: Principal, id: number): Promise<UserDto | null> {
    const rows = await this.users.findVisible(tenantScope(principal), id);
    return rows[0] ?? null;
  }

  /** A user the caller may change: in scope (else 404) and not holding more than the caller (else 403). */
  private async editable(principal: Principal, id: number): Promise<UserDto> {
    const user = await this.get(principal, id);
    const role = await this.roles.find(principal, user.roleRegistryId);
    refuseEscalation(principal, role?.permissions ?? [], 'change this user');
    return user;
  }

  /**
   * The user row locked in `tx` (FOR UPDATE), as the change's "before" (contract 18). `checked` was read
   * and checked before the lock: a user deleted since is gone (404), and one moved to another role since
   * is checked again (its role in the caller's reach, else 404; not holding more than the caller, else 403).
   */
  private async lockEditable(principal: Principal, checked: UserDto, tx: EntityManager): Promise<LockedUser> {
    const current = await this.users.lockForChange(checked.id, tx);
    if (!current || current.deleted) throw notFound(NO_USER);
    if (current.roleRegistryId !== checked.roleRegistryId) {
      const role = await this.roles.find(principal, current.roleRegistryId);
      if (!role) throw notFound(NO_USER);
      refuseEscalation(principal, role.permissions, 'change this user');
    }
    return current;
  }

  private async endSessions(
    principal: Principal,
    user: UserDto,
    reasonId: LogoutReasonId,
    context: RequestContext,
    failure = 'The user\'s sessions could not be ended; nothing was changed.',
  ): Promise<void> {
    try {
      await this.revocation.revokeAll(
        { userRegistryId: user.id, userName: user.name, tenantRegistryId: user.tenantRegistryId },
        { reasonId, context, cutByUser: principal.userName },
      );
    } catch (error) {
      this.logger.error(`could not end the sessions of user ${user.id}: ${(error as Error).message}`);
      throw serviceUnavailable(failure);
    }
  }

  /**
   * Opens the transport encryption, then checks the value: a wire hash must be 64 hex characters
   * (stored lowercase, as the browser sends it); a plaintext password must pass every rule.
   */
  private readPassword(field: string, wirePasswordHash: boolean): PasswordValue {
    const value = this.transport.open(field);
    if (value === null) return { problems: [{ field: 'password', message: 'could not be decrypted' }] };
    if (wirePasswordHash) {
      const lower = value.toLowerCase();
      const problems = wireHashProblems(lower, 'password');
      return problems.length > 0 ? { problems } : { value: lower };
    }
    const problems = passwordRuleProblems(value, 'password');
    return problems.length > 0 ? { problems } : { value };
  }
}

function emptyToNull(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

/** What an AdminChange says of a change to user `user` (a password as "(secret)"); null when nothing changed. */
function userChange(actionType: ActionTypeId, user: { id: number | null; name: string; tenantRegistryId: number }, before: ChangeSide, after: ChangeSide): AdminChangeEntry | null {
  const changes = changesText(before, after, { secrets: ['password'], alwaysChanged: ['password'] });
  if (changes === '{}') return null;
  return { actionType, targetTable: 'UserRegistry', targetId: user.id, targetName: user.name, targetTenantRegistryId: user.tenantRegistryId, changes };
}
