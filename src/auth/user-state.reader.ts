import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import type { Principal } from './principal';

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

/** Whether a user may hold a session or use a key at all: active, not deleted or locked, tenant active. */
export function mayAuthenticate(state: UserState | null): state is UserState {
  return state !== null && !state.deleted && state.active && !state.passwordLocked && state.tenantActive;
}

/** The Principal of a user whose credential checked out; the credential-specific members are added. */
export function principalOf(
  state: UserState,
  credential: Pick<Principal, 'authenticationType' | 'sessionStartDate' | 'sessionId' | 'expiration' | 'apiKeyDisplay'>,
): Principal {
  return {
    userRegistryId: state.id,
    userName: state.name,
    tenantRegistryId: state.tenantRegistryId,
    tenantName: state.tenantName,
    landlord: state.landlord,
    permissions: state.permissions,
    absoluteExpiration: null,
    ...credential,
  };
}

/**
 * One row per user with the role's permissions aggregated by a join, and the open sessions named by
 * the batch's tokens (contract 14: checked in the same read as the user row, no second round trip);
 * each list comes back in one JSON text cell, which node-postgres hands over unparsed (cheaper than
 * parsing typed columns). A landlord holds every permission specification; that list is read once (it
 * changes only with migrations), which keeps the per-request statement free of per-row sub-plans:
 * measured here, ARRAY(SELECT …) sub-plans cut PostgreSQL's throughput for this statement from ~8000
 * to ~4800 per second. The two lists are uncorrelated scalar sub-queries, each run once per batch.
 * A session that has ended is simply absent, like one that never existed: both are refused.
 */
const READ_USERS = `
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

const READ_ALL_PERMISSIONS = `SELECT coalesce(array_agg("Id" ORDER BY "Id"), '{}') AS ids FROM "PermissionSpecification"`;

/** A row as the statement returns it, inside one JSON text cell (cheaper to parse than columns). */
type UserRow = Omit<UserState, 'permissions' | 'tokensValidFrom'> & {
  tokensValidFrom: number | null;
  roleActive: boolean;
  permissions: number[];
};

/** An open session as the guard checks it (contract 14). */
export interface OpenSession {
  id: string;
  userRegistryId: number;
  /** LastSeenDate, Unix milliseconds: when it was last written (at most once a minute). */
  lastSeen: number;
}

/** The user row and, when a session id was asked for, that session if it is still open. */
export interface UserAndSession {
  state: UserState | null;
  /** Null when no session was asked for, or it ended, or it never existed. */
  session: OpenSession | null;
}

interface Waiter {
  id: number;
  sessionId: string | null;
  resolve: (read: UserAndSession) => void;
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
  /** Every permission specification id, read on first use: what a landlord holds. */
  private allPermissions: Promise<number[]> | null = null;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.pool = (dataSource.driver as unknown as { master: Pool }).master;
  }

  /** The user row alone (API keys have no sessions). */
  async read(id: number): Promise<UserState | null> {
    return (await this.enqueue(id, null)).state;
  }

  /**
   * The user row and the open session `sessionId` of a JWT, in the same batched statement. The id
   * must be a well-formed UUID (TokenService checks it): one malformed id would fail the whole batch.
   */
  readWithSession(id: number, sessionId: string): Promise<UserAndSession> {
    return this.enqueue(id, sessionId);
  }

  private enqueue(id: number, sessionId: string | null): Promise<UserAndSession> {
    return new Promise((resolve, reject) => {
      this.pending.push({ id, sessionId, resolve, reject });
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
    const sessionIds = [...new Set(batch.flatMap((w) => (w.sessionId === null ? [] : [w.sessionId])))];
    Promise.all([
      this.landlordPermissions(),
      this.pool.query<{ rows: string; sessions: string }>({ name: 'tm-user-state', text: READ_USERS, values: [ids, sessionIds] }),
    ])
      .then(([all, result]) => {
        const rows = JSON.parse(result.rows[0].rows) as UserRow[];
        const byId = new Map(rows.map((row) => [row.id, this.toState(row, all)]));
        const sessions = new Map((JSON.parse(result.rows[0].sessions) as OpenSession[]).map((s) => [s.id, s]));
        for (const waiter of batch) {
          const session = waiter.sessionId === null ? null : (sessions.get(waiter.sessionId) ?? null);
          waiter.resolve({ state: byId.get(waiter.id) ?? null, session });
        }
      })
      .catch((error: unknown) => {
        for (const waiter of batch) waiter.reject(error);
      });
  }

  private landlordPermissions(): Promise<number[]> {
    this.allPermissions ??= this.pool.query<{ ids: number[] }>(READ_ALL_PERMISSIONS).then(
      (result) => result.rows[0].ids,
      (error: unknown) => {
        this.allPermissions = null;
        throw error;
      },
    );
    return this.allPermissions;
  }

  private toState(row: UserRow, all: number[]): UserState {
    const { roleActive, permissions, tokensValidFrom, ...state } = row;
    return {
      ...state,
      tokensValidFrom: tokensValidFrom === null ? null : new Date(tokensValidFrom),
      permissions: row.landlord ? all : roleActive ? [...permissions].sort((a, b) => a - b) : [],
    };
  }
}
