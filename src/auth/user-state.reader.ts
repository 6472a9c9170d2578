import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';

/** The user row as the guard needs it on every request. */
export interface UserState {
  id: number;
  name: string;
  active: boolean;
  deleted: boolean;
  passwordLocked: boolean;
  tokensValidFrom: Date | null;
  tenantRegistryId: number;
  tenantName: string;
  tenantActive: boolean;
  landlord: boolean;
  permissions: number[];
}

const READ_USERS = `
  SELECT u."Id" AS id, u."Name" AS name, u."Active" AS active, u."Deleted" AS deleted,
         u."PasswordLocked" AS "passwordLocked", u."TokensValidFrom" AS "tokensValidFrom",
         t."Id" AS "tenantRegistryId", t."Name" AS "tenantName", t."Active" AS "tenantActive", t."Landlord" AS landlord,
         CASE WHEN t."Landlord"
              THEN ARRAY(SELECT s."Id" FROM "PermissionSpecification" s ORDER BY s."Id")
              WHEN r."Active"
              THEN ARRAY(SELECT p."PermissionSpecificationId" FROM "RoleRegistryPermission" p
                         WHERE p."RoleRegistryId" = r."Id" ORDER BY 1)
              ELSE '{}'::int[] END AS permissions
    FROM "UserRegistry" u
    JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
    JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"
   WHERE u."Id" = ANY($1::int[])`;

interface Waiter {
  id: number;
  resolve: (state: UserState | null) => void;
  reject: (error: unknown) => void;
}

/**
 * Reads user rows for the guard, batching the reads of concurrent requests: every request that asks
 * during one event-loop turn is answered by one query sent after that turn, so each request still
 * gets a read taken after it arrived, at a fraction of the round trips. A failed read rejects every
 * waiter: the guard then refuses (fail closed).
 */
@Injectable()
export class UserStateReader {
  private pending: Waiter[] = [];
  private scheduled = false;
  private readonly pool: Pool;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  read(id: number): Promise<UserState | null> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    const ids = [...new Set(batch.map((w) => w.id))];
    this.pool
      .query<UserState>({ name: 'tm-user-state', text: READ_USERS, values: [ids] })
      .then((result) => {
        const byId = new Map(result.rows.map((row) => [row.id, row]));
        for (const waiter of batch) waiter.resolve(byId.get(waiter.id) ?? null);
      })
      .catch((error: unknown) => {
        for (const waiter of batch) waiter.reject(error);
      });
  }
}
