import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { badRequest, notFound } from '../common/problem';
import { Transactions } from '../database/transactions';
import { PermissionSpecificationRepository } from '../users/permission-specification.repository';
import { PermissionSpecificationDto, RoleDto, CreateRoleDto, UpdateRoleDto } from './role-registry.dto';
import { refuseEscalation, tenantScope } from '../users/registry-scope';
import { uniqueOr409 } from '../users/registry-validation';
import { RoleRegistryPermissionRepository } from '../users/role-registry-permission.repository';
import { RoleRegistryRepository } from '../users/role-registry.repository';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { TenantRegistryRepository } from '../users/tenant-registry.repository';

const DUPLICATE = 'A role with this name already exists in this tenant.';
const NO_ROLE = 'No such role.';

/**
 * Roles and their permissions, scoped to the caller's tenant (a landlord sees every tenant). A role
 * of another tenant is answered as absent. Non-landlord callers can neither grant nor edit
 * permissions they do not hold.
 */
@Injectable()
export class RoleRegistryService {
  constructor(
    private readonly roles: RoleRegistryRepository,
    private readonly rolePermissions: RoleRegistryPermissionRepository,
    private readonly permissions: PermissionSpecificationRepository,
    private readonly tenants: TenantRegistryRepository,
    private readonly transactions: Transactions,
    private readonly changes: ServiceChangePublisher,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  list(principal: Principal): Promise<RoleDto[]> {
    return this.roles.findVisible(tenantScope(principal));
  }

  /**
   * The roles the caller may give a user (the user form's choices): those of the tenants it
   * administers whose permissions it holds itself, the same rule UserRegistry POST and PUT apply.
   */
  async assignable(principal: Principal): Promise<RoleDto[]> {
    const roles = await this.list(principal);
    if (principal.landlord) return roles;
    const held = new Set(principal.permissions);
    return roles.filter((role) => role.permissions.every((id) => held.has(id)));
  }

  /** A role the caller may see, or null; also used to check the role given to a user. */
  async find(principal: Principal, id: number): Promise<RoleDto | null> {
    const rows = await this.roles.findVisible(tenantScope(principal), id);
    return rows[0] ?? null;
  }

  async listPermissions(): Promise<PermissionSpecificationDto[]> {
    return (await this.permissions.findAll()).map(({ id, name }) => ({ id, name }));
  }

  async create(actor: AdminActor, body: CreateRoleDto): Promise<RoleDto> {
    const { principal } = actor;
    const tenantRegistryId = await this.tenantFor(principal, body.tenantRegistryId);
    const permissions = await this.checkedPermissions(body.permissions ?? []);
    refuseEscalation(principal, permissions, 'grant these permissions');
    const id = await uniqueOr409(
      () =>
        this.transactions.runChange(async (tx) => {
          const active = body.active ?? true;
          const roleId = await this.roles.create({ tenantRegistryId, name: body.name, active }, tx);
          await this.rolePermissions.replaceForRole(roleId, permissions, tx);
          await this.adminChanges.record(tx, actor, {
            actionType: ActionTypeId.RoleCreated,
            targetTable: 'RoleRegistry',
            targetId: roleId,
            targetName: body.name,
            targetTenantRegistryId: tenantRegistryId,
            changes: changesText(null, { name: body.name, tenantRegistryId, active, permissions }),
          });
          return roleId;
        }),
      DUPLICATE,
    );
    await this.changes.publish('RoleRegistry', id, 'created');
    return (await this.find(principal, id))!;
  }

  async update(actor: AdminActor, id: number, body: UpdateRoleDto): Promise<RoleDto> {
    const { principal } = actor;
    const current = await this.find(principal, id);
    if (!current) throw notFound(NO_ROLE);
    if (body.tenantRegistryId !== undefined && body.tenantRegistryId !== null && body.tenantRegistryId !== current.tenantRegistryId) {
      throw badRequest('A role cannot move to another tenant.', [{ field: 'tenantRegistryId', message: 'must be the role\'s own tenant' }]);
    }
    // A role holding more than the caller may not be touched by it at all (not even renamed or emptied).
    refuseEscalation(principal, current.permissions, 'change this role');
    const permissions = body.permissions ? await this.checkedPermissions(body.permissions) : null;
    if (permissions) refuseEscalation(principal, permissions, 'grant these permissions');
    await uniqueOr409(
      () =>
        this.transactions.runChange(async (tx) => {
          // The role as it is under its row lock: checked again (a concurrent change may have granted it
          // more since), and the "before" of this change.
          const locked = await this.roles.lockForChange(tenantScope(principal), id, tx);
          if (!locked) throw notFound(NO_ROLE);
          refuseEscalation(principal, locked.permissions, 'change this role');
          await this.roles.update(id, { name: body.name ?? undefined, active: body.active ?? undefined }, tx);
          if (permissions) await this.rolePermissions.replaceForRole(id, permissions, tx);
          const before = { name: locked.name, active: locked.active, permissions: locked.permissions };
          const after = { name: body.name ?? locked.name, active: body.active ?? locked.active, permissions: permissions ?? locked.permissions };
          const text = changesText(before, after);
          if (text === '{}') return;
          await this.adminChanges.record(tx, actor, {
            actionType: ActionTypeId.RoleChanged,
            targetTable: 'RoleRegistry',
            targetId: id,
            targetName: after.name,
            targetTenantRegistryId: locked.tenantRegistryId,
            changes: text,
          });
        }),
      DUPLICATE,
    );
    await this.changes.publish('RoleRegistry', id, 'updated');
    const role = await this.find(principal, id);
    if (!role) throw notFound(NO_ROLE);
    return role;
  }

  /** The tenant of a new role: the caller's own unless a landlord names another that exists. */
  private async tenantFor(principal: Principal, requested: number | undefined | null): Promise<number> {
    if (requested === undefined || requested === null || requested === principal.tenantRegistryId) return principal.tenantRegistryId;
    if (!principal.landlord) throw notFound('No such tenant.');
    if (!(await this.tenants.exists(requested))) throw notFound('No such tenant.');
    return requested;
  }

  /** Deduplicated, sorted ids; a 400 naming every id that is no PermissionSpecification. */
  private async checkedPermissions(ids: number[]): Promise<number[]> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return unique;
    const knownIds = new Set(await this.permissions.findExistingIds(unique));
    const unknown = unique.filter((id) => !knownIds.has(id));
    if (unknown.length > 0) {
      throw badRequest('Unknown permissions.', unknown.map((id) => ({ field: 'permissions', message: `${id} is not a permission` })));
    }
    return unique;
  }
}
