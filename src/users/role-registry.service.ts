import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import type { Principal } from '../auth/principal';
import { badRequest, notFound } from '../common/problem';
import { PermissionSpecificationDto, RoleDto, CreateRoleDto, UpdateRoleDto } from './role-registry.dto';
import { refuseEscalation, tenantScope } from './registry-scope';
import { uniqueOr409 } from './registry-validation';
import { ServiceChangePublisher } from './service-change.publisher';

const ROLE_SELECT = `
  SELECT r."Id" AS id, r."Name" AS name, r."TenantRegistryId" AS "tenantRegistryId", t."Name" AS "tenantName",
         r."Active" AS active,
         ARRAY(SELECT p."PermissionSpecificationId" FROM "RoleRegistryPermission" p
                WHERE p."RoleRegistryId" = r."Id" ORDER BY 1) AS permissions
    FROM "RoleRegistry" r
    JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"
   WHERE ($1::int IS NULL OR r."TenantRegistryId" = $1)`;
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly changes: ServiceChangePublisher,
  ) {}

  list(principal: Principal): Promise<RoleDto[]> {
    return this.dataSource.query(`${ROLE_SELECT} ORDER BY r."Id"`, [tenantScope(principal)]);
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
  async find(principal: Principal, id: number, manager: EntityManager = this.dataSource.manager): Promise<RoleDto | null> {
    const rows: RoleDto[] = await manager.query(`${ROLE_SELECT} AND r."Id" = $2`, [tenantScope(principal), id]);
    return rows[0] ?? null;
  }

  listPermissions(): Promise<PermissionSpecificationDto[]> {
    return this.dataSource.query(`SELECT "Id" AS id, "Name" AS name FROM "PermissionSpecification" ORDER BY "Id"`);
  }

  async create(principal: Principal, body: CreateRoleDto): Promise<RoleDto> {
    const tenantRegistryId = await this.tenantFor(principal, body.tenantRegistryId);
    const permissions = await this.checkedPermissions(body.permissions ?? []);
    refuseEscalation(principal, permissions, 'grant these permissions');
    const id = await uniqueOr409(
      () =>
        this.dataSource.transaction(async (manager) => {
          const [row]: { id: number }[] = await manager.query(
            `INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, $2, $3) RETURNING "Id" AS id`,
            [tenantRegistryId, body.name, body.active ?? true],
          );
          await this.replacePermissions(manager, row.id, permissions);
          return row.id;
        }),
      DUPLICATE,
    );
    await this.changes.publish('RoleRegistry', id, 'created');
    return (await this.find(principal, id))!;
  }

  async update(principal: Principal, id: number, body: UpdateRoleDto): Promise<RoleDto> {
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
        this.dataSource.transaction(async (manager) => {
          await manager.query(
            `UPDATE "RoleRegistry" SET "Name" = COALESCE($2, "Name"), "Active" = COALESCE($3, "Active") WHERE "Id" = $1`,
            [id, body.name ?? null, body.active ?? null],
          );
          if (permissions) await this.replacePermissions(manager, id, permissions);
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
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM "TenantRegistry" WHERE "Id" = $1`, [requested]);
    if (rows.length === 0) throw notFound('No such tenant.');
    return requested;
  }

  /** Deduplicated, sorted ids; a 400 naming every id that is no PermissionSpecification. */
  private async checkedPermissions(ids: number[]): Promise<number[]> {
    const unique = [...new Set(ids)].sort((a, b) => a - b);
    if (unique.length === 0) return unique;
    const known: { id: number }[] = await this.dataSource.query(
      `SELECT "Id" AS id FROM "PermissionSpecification" WHERE "Id" = ANY($1::int[])`,
      [unique],
    );
    const knownIds = new Set(known.map((row) => row.id));
    const unknown = unique.filter((id) => !knownIds.has(id));
    if (unknown.length > 0) {
      throw badRequest('Unknown permissions.', unknown.map((id) => ({ field: 'permissions', message: `${id} is not a permission` })));
    }
    return unique;
  }

  private async replacePermissions(manager: EntityManager, roleId: number, permissions: number[]): Promise<void> {
    await manager.query(`DELETE FROM "RoleRegistryPermission" WHERE "RoleRegistryId" = $1`, [roleId]);
    if (permissions.length === 0) return;
    await manager.query(
      `INSERT INTO "RoleRegistryPermission" ("RoleRegistryId", "PermissionSpecificationId") SELECT $1, unnest($2::int[])`,
      [roleId, permissions],
    );
  }
}
