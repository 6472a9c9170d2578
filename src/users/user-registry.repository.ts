import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { EntityManager, Repository } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { UserRegistry } from './user-registry.entity';

/** A user as the guard needs it on every request, as the guard read returns it. */
export interface GuardUserRow {
  id: number;
  name: string;
  active: boolean;
  deleted: boolean;
  passwordLocked: boolean;
  /** TokensValidFrom, Unix milliseconds. */
  tokensValidFrom: number | null;
  tenantRegistryId: number;
  tenantName: string;
  tenantActive: boolean;
  landlord: boolean;
  roleActive: boolean;
  /** The role's permission ids, unordered (a landlord's are read separately). */
  permissions: number[];
}

/** An open session as the guard checks it (contract 14). */
export interface GuardSessionRow {
  id: string;
  userRegistryId: number;
  /** LastSeenDate, Unix milliseconds: when it was last written (at most once a minute). */
  lastSeen: number;
}

/**
 * The guard's read: one row per user with the role's permissions aggregated by a join, and the open
 * sessions named by the batch's tokens (contract 14: checked in the same read as the user row, no second
 * round trip); each list comes back in one JSON text cell, which node-postgres hands over unparsed. A
 * landlord's permissions are not read here (PermissionSpecificationRepository.findAllIds, once), which
 * keeps the statement free of per-row sub-plans. The two lists are uncorrelated scalar sub-queries, each
 * run once per batch. A session that has ended is simply absent, like one that never existed.
 */
const GUARD_READ = `
  SELECT (SELECT coalesce(json_agg(x), '[]') FROM (
    SELECT u."Id" AS id, u."Name" AS name, u."Active" AS active, u."Deleted" AS deleted,
           u."PasswordLocked" AS "passwordLocked",
           (extract(epoch FROM u."TokensValidFrom") * 1000)::float8 AS "tokensValidFrom",
           t."Id" AS "tenantRegistryId", t."Name" AS "tenantName", t."Active" AS "tenantActive", t."Landlord" AS landlord,
           r."Active" AS "roleActive", array_remove(array_agg(p."PermissionSpecificationId"), NULL) AS permissions
      FROM "UserRegistry" u
      JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
      JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"
      LEFT JOIN "RoleRegistryPermission" p ON p."RoleRegistryId" = r."Id"
     WHERE u."Id" = ANY($1::int[])
     GROUP BY u."Id", r."Id", t."Id") x)::text AS rows,
    (SELECT coalesce(json_agg(s), '[]') FROM (
    SELECT "Id" AS id, "UserRegistryId" AS "userRegistryId", (extract(epoch FROM "LastSeenDate") * 1000)::float8 AS "lastSeen"
      FROM "UserSession"
     WHERE "Id" = ANY($2::uuid[]) AND "EndedDate" IS NULL) s)::text AS sessions`;

/** Queries on UserRegistry. */
@Injectable()
export class UserRegistryRepository {
  constructor(@InjectRepository(UserRegistry) private readonly repository: Repository<UserRegistry>) {}

  /** Inserts a user; the id it was given. */
  async create(values: Partial<UserRegistry>, tx?: EntityManager): Promise<number> {
    const { identifiers } = await (tx?.getRepository(UserRegistry) ?? this.repository).insert(values);
    return identifiers[0].id as number;
  }

  /**
   * The guard's per-request read for a batch of requests (auth/user-state.reader.ts batches them): the
   * users `ids` and those of `sessionIds` that are still open. Raw SQL, rows as one JSON text cell
   * each, run as a named prepared statement on a connection taken from the driver's pool
   * (PostgresDriver.obtainMasterConnection, what TypeORM's own query runners use): the per-request cost
   * is what bench/auth.js measures (bench/RESULTS.md issue 2: join instead of sub-plans ~4800 → ~8000
   * statements/s; the JSON cell ~80 → ~65 µs of client CPU per query; a TypeORM QueryRunner around the
   * same statement measured 5-25 µs more CPU per query, issue 15; docs/decisions/0006).
   */
  async readForGuard(ids: number[], sessionIds: string[]): Promise<{ users: GuardUserRow[]; sessions: GuardSessionRow[] }> {
    const driver = this.repository.manager.connection.driver as PostgresDriver;
    const [client, release] = (await driver.obtainMasterConnection()) as [PoolClient, (error?: unknown) => void];
    let failure: unknown;
    // As pg's own Pool.query does: an error event while the connection is out must not go unheard.
    const onError = (error: unknown) => (failure = error);
    client.on('error', onError);
    try {
      const result = await client.query<{ rows: string; sessions: string }>({ name: 'tm-user-state', text: GUARD_READ, values: [ids, sessionIds] });
      return { users: JSON.parse(result.rows[0].rows) as GuardUserRow[], sessions: JSON.parse(result.rows[0].sessions) as GuardSessionRow[] };
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      client.removeListener('error', onError);
      // A connection that failed is handed back with its error, so the pool discards it.
      release(failure);
    }
  }
}
