import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Principal } from '../auth/principal';
import { notFound } from '../common/problem';

/** A user an administrator acts on. */
export interface TargetUser {
  id: number;
  name: string;
  tenantRegistryId: number;
  /** What the user may do (every permission for a landlord user), to refuse escalation. */
  permissions: number[];
}

const MAX_ID = 2_147_483_647;

/**
 * Finds the user an administrator route acts on, within the caller's reach: the caller's own tenant,
 * or any tenant for a landlord. Anything out of reach answers 404 exactly
 * like an id that does not exist, so another tenant's users are never revealed (contract 6).
 */
@Injectable()
export class TargetUsers {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async find(caller: Principal, id: number): Promise<TargetUser> {
    if (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID) throw notFound();
    const rows: TargetUser[] = await this.dataSource.query(
      `SELECT u."Id" AS id, u."Name" AS name, r."TenantRegistryId" AS "tenantRegistryId",
              CASE WHEN t."Landlord" THEN ARRAY(SELECT s."Id" FROM "PermissionSpecification" s ORDER BY 1)
                   WHEN r."Active" THEN ARRAY(SELECT p."PermissionSpecificationId" FROM "RoleRegistryPermission" p
                                              WHERE p."RoleRegistryId" = r."Id" ORDER BY 1)
                   ELSE '{}'::int[] END AS permissions
         FROM "UserRegistry" u
         JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
         JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"
        WHERE u."Id" = $1 AND NOT u."Deleted"`,
      [id],
    );
    const target = rows[0];
    if (!target) throw notFound();
    if (!caller.landlord && target.tenantRegistryId !== caller.tenantRegistryId) throw notFound();
    return target;
  }
}
