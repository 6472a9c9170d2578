import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { PoolClient } from 'pg';
import { EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { RecordedChanges, RecordRow, SetMember } from '../database/recorded-change';
import { SERVICE_CHANGE_CONDITION } from '../database/service-change-mark';
import { PermissionSpecification } from './permission-specification.entity';
import { RoleRegistryPermission } from './role-registry-permission.entity';
import { RoleRegistry } from './role-registry.entity';
import { TenantRegistry } from './tenant-registry.entity';
import { UserRegistry } from './user-registry.entity';

/** A user as a sign-in needs it: the stored hash and every state a sign-in must check. */
export interface SignInAccountRow {
  id: number;
  name: string;
  passwordHash: string | null;
  /** The user and its tenant are both active. */
  active: boolean;
  passwordLocked: boolean;
  passwordExpiryDate: Date | null;
  wirePasswordHash: boolean;
  tenantRegistryId: number;
}

/**
 * The columns of SignInAccountRow as raw SQL over `u` (UserRegistry), `r` (its RoleRegistry) and `t` (its
 * TenantRegistry), joined by {@link SIGN_IN_ACCOUNT_JOINS}: for a statement that reads the account together
 * with what identified it, in one round trip (a passkey's credential, contract 20); the reads by name and
 * by id below use the same list, so every scheme sees an account alike.
 */
export const SIGN_IN_ACCOUNT_COLUMNS = `u."Id" AS id, u."Name" AS name, u."Password" AS "passwordHash", u."Active" AND t."Active" AS active,
  u."PasswordLocked" AS "passwordLocked", u."PasswordExpiryDate" AS "passwordExpiryDate", u."WirePasswordHash" AS "wirePasswordHash",
  r."TenantRegistryId" AS "tenantRegistryId"`;
/** The joins SIGN_IN_ACCOUNT_COLUMNS reads; `u` must also be NOT "Deleted" in the statement's condition. */
export const SIGN_IN_ACCOUNT_JOINS = `JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId" JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"`;

/** A user as the registry shows it: every column a page needs, never the password hash. */
export interface UserRow {
  id: number;
  name: string;
  email: string | null;
  roleRegistryId: number;
  roleName: string;
  tenantRegistryId: number;
  tenantName: string;
  active: boolean;
  passwordLocked: boolean;
  passwordLockedDate: Date | null;
  failedPasswordCount: number;
  passwordExpiryDate: Date | null;
  passwordCreatedDate: Date | null;
  lastLoginDate: Date | null;
  wirePasswordHash: boolean;
  createdDate: Date;
  createdUser: string | null;
}

/** A user an administrator acts on, with what it may do (every permission for a landlord user). */
export interface TargetUserRow {
  id: number;
  name: string;
  tenantRegistryId: number;
  permissions: number[];
}

/** A user's administered members as they are under the row lock (lockForChange). */
export interface LockedUser {
  name: string;
  email: string | null;
  roleRegistryId: number;
  active: boolean;
  passwordLocked: boolean;
  wirePasswordHash: boolean;
  deleted: boolean;
}

/** The failure count and lock state an attempt's counting statement left behind. */
export interface AttemptCount {
  count: number;
  locked: boolean;
}

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

/**
 * Every query on UserRegistry. Name uniqueness among users not deleted (case-insensitive) is the
 * database's: callers map 23505. The sign-in counters change in single statements (contract 13: a
 * concurrent attempt can never slip between a check and a write).
 */
@Injectable()
export class UserRegistryRepository {
  /** A user's change and its AdminChange row in one statement, generated from the entity (what it buys: database/recorded-change.ts). */
  private readonly recorded: RecordedChanges<UserRegistry>;

  constructor(@InjectRepository(UserRegistry) private readonly repository: Repository<UserRegistry>) {
    // A deleted user is never changed again.
    this.recorded = new RecordedChanges<UserRegistry>(repository.metadata, { live: 'NOT "Deleted"' });
  }

  private on(tx?: EntityManager): Repository<UserRegistry> {
    return tx ? tx.getRepository(UserRegistry) : this.repository;
  }

  /** Inserts a user; the id it was given. */
  async create(values: Partial<UserRegistry>, tx?: EntityManager): Promise<number> {
    const { identifiers } = await this.on(tx).insert(values);
    return identifiers[0].id as number;
  }

  /**
   * Inserts a user with its password and its AdminChange row `record` (TargetId: the new Id) in one
   * statement, in autocommit: both or neither (database/recorded-change.ts). The id it was given.
   */
  async createRecorded(values: Partial<UserRegistry>, record: RecordRow): Promise<number> {
    const created = await this.recorded.insert(this.repository.manager, { values, record, fromRow: { targetId: 'id' } });
    return created.id;
  }

  // ---- the registry (administrators) ----

  /** Users not deleted of tenant `tenantScope` (every tenant when null), or the one user `id` among them, by id. */
  findVisible(tenantScope: number | null, id?: number): Promise<UserRow[]> {
    const query = this.withRoleAndTenant()
      .select('u.id', 'id')
      .addSelect('u.name', 'name')
      .addSelect('u.email', 'email')
      .addSelect('u.roleRegistryId', 'roleRegistryId')
      .addSelect('r.name', 'roleName')
      .addSelect('r.tenantRegistryId', 'tenantRegistryId')
      .addSelect('t.name', 'tenantName')
      .addSelect('u.active', 'active')
      .addSelect('u.passwordLocked', 'passwordLocked')
      .addSelect('u.passwordLockedDate', 'passwordLockedDate')
      .addSelect('u.failedPasswordCount', 'failedPasswordCount')
      .addSelect('u.passwordExpiryDate', 'passwordExpiryDate')
      .addSelect('u.passwordCreatedDate', 'passwordCreatedDate')
      .addSelect('u.lastLoginDate', 'lastLoginDate')
      .addSelect('u.wirePasswordHash', 'wirePasswordHash')
      .addSelect('u.createdDate', 'createdDate')
      .addSelect('u.createdUser', 'createdUser')
      .where('NOT u.deleted')
      .orderBy('u.id');
    if (tenantScope !== null) query.andWhere('r.tenantRegistryId = :tenantScope', { tenantScope });
    if (id !== undefined) query.andWhere('u.id = :id', { id });
    return query.getRawMany<UserRow>();
  }

  /**
   * The user `id` (not deleted) with its tenant and what it may do: every permission for a landlord
   * user, its role's when the role is active, none otherwise. One statement.
   */
  async findTarget(id: number): Promise<TargetUserRow | null> {
    const query = this.withRoleAndTenant();
    const every = query
      .subQuery()
      .select('coalesce(array_agg(s.id ORDER BY s.id), ARRAY[]::int[])')
      .from(PermissionSpecification, 's')
      .getQuery();
    const granted = query
      .subQuery()
      .select('coalesce(array_agg(p.permissionSpecificationId ORDER BY p.permissionSpecificationId), ARRAY[]::int[])')
      .from(RoleRegistryPermission, 'p')
      .where('p.roleRegistryId = r.id')
      .getQuery();
    const row = await query
      .select('u.id', 'id')
      .addSelect('u.name', 'name')
      .addSelect('r.tenantRegistryId', 'tenantRegistryId')
      .addSelect(`CASE WHEN t.landlord THEN ${every} WHEN r.active THEN ${granted} ELSE ARRAY[]::int[] END`, 'permissions')
      .where('u.id = :id AND NOT u.deleted', { id })
      .getRawOne<TargetUserRow>();
    return row ?? null;
  }

  /**
   * Changes a user's registry members (an omitted one stays) under its row lock and inserts its
   * AdminChange row `record` (without Changes: rendered from the user locked and after, the members
   * email, roleRegistryId, active, passwordLocked) in one statement, while the user is not deleted and
   * still has the role `roleRegistryId` the caller's checks relied on (database/recorded-change.ts). No
   * row when nothing Changes names changed. `passwordLocked` false also clears the failure count and the
   * lock date; true keeps an existing lock date, else stamps `now`. False when the user was deleted or
   * moved to another role since; true also when nothing was to change.
   */
  async updateMembers(
    id: number,
    changes: { email?: string | null; roleRegistryId?: number; active?: boolean; passwordLocked?: boolean },
    now: Date,
    compared: { roleRegistryId: number },
    record: RecordRow,
    tx?: EntityManager,
  ): Promise<boolean> {
    const set: SetMember[] = [];
    const recorded: string[] = [];
    if (changes.email !== undefined) set.push({ field: 'email', value: changes.email });
    if (changes.roleRegistryId !== undefined) set.push({ field: 'roleRegistryId', value: changes.roleRegistryId });
    if (changes.active !== undefined) set.push({ field: 'active', value: changes.active });
    for (const member of set) recorded.push(member.field);
    if (changes.passwordLocked !== undefined) recorded.push('passwordLocked');
    if (changes.passwordLocked === true) {
      set.push({ field: 'passwordLocked', value: true }, { field: 'passwordLockedDate', value: now, form: 'unless-set' });
    } else if (changes.passwordLocked === false) {
      set.push({ field: 'passwordLocked', value: false }, { field: 'passwordLockedDate', value: null }, { field: 'failedPasswordCount', value: 0 });
    }
    if (set.length === 0) return true;
    return (await this.recorded.change(tx ?? this.repository.manager, { id, set, compared, recorded, record, answer: 'changed' })) !== null;
  }

  /**
   * The members an administrator changes, read under the row lock in `tx` (SELECT ... FOR UPDATE): the
   * AdminChange's "before" (contract 18) is then the value the change replaced, even when two changes
   * of the same user race (check-then-act in one transaction). Null when there is no such user.
   */
  async lockForChange(id: number, tx: EntityManager): Promise<LockedUser | null> {
    const rows = await tx.query<LockedUser[]>(
      `SELECT "Name" AS name, "Email" AS email, "RoleRegistryId" AS "roleRegistryId", "Active" AS active,
              "PasswordLocked" AS "passwordLocked", "WirePasswordHash" AS "wirePasswordHash", "Deleted" AS deleted
         FROM "UserRegistry" WHERE "Id" = $1 FOR UPDATE`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Soft delete: the row stays for the audit trails; the name becomes free for a new user. */
  async markDeleted(id: number, tx?: EntityManager): Promise<void> {
    await this.on(tx).update({ id }, { deleted: true });
  }

  /**
   * The tenant of each user of `ids` (its role's), deleted users included: the audit trail and the
   * ServiceChange stream scope rows of users deleted since. Users not found are absent from the map.
   */
  async tenantsOf(ids: number[], tx?: EntityManager): Promise<Map<number, number>> {
    if (ids.length === 0) return new Map();
    const rows = await this.on(tx)
      .createQueryBuilder('u')
      .innerJoin(RoleRegistry, 'r', 'r.id = u.roleRegistryId')
      .select('u.id', 'id')
      .addSelect('r.tenantRegistryId', 'tenant')
      .where('u.id IN (:...ids)', { ids: [...new Set(ids)] })
      .getRawMany<{ id: number; tenant: number }>();
    return new Map(rows.map((row) => [row.id, row.tenant]));
  }

  /**
   * Every token of the user issued before `now` is refused from now on (read on every request).
   * Answers the TokensValidFrom it replaced (the AdminChange's before, contract 18): read under the
   * row lock the UPDATE then takes anyway, in `tx`, so concurrent revocations each see the one before.
   */
  async revokeTokens(id: number, now: Date, tx: EntityManager): Promise<Date | null> {
    const rows = await tx.query<{ TokensValidFrom: Date | null }[]>(`SELECT "TokensValidFrom" FROM "UserRegistry" WHERE "Id" = $1 FOR UPDATE`, [id]);
    await this.on(tx).update({ id }, { tokensValidFrom: now });
    return rows[0]?.TokensValidFrom ?? null;
  }

  // ---- sign-in ----

  /**
   * The account named `name` among users not deleted, compared case-insensitively (the unique
   * expression index `lower("Name") WHERE NOT "Deleted"` answers it).
   */
  findSignInAccountByName(name: string): Promise<SignInAccountRow | undefined> {
    return this.signInAccount(`lower(u."Name") = lower($1)`, name);
  }

  findSignInAccountById(id: number): Promise<SignInAccountRow | undefined> {
    return this.signInAccount(`u."Id" = $1`, id);
  }

  /**
   * Counts an attempt and, when the count passes `lockAbove`, locks the account in the same statement
   * (stamping `now` as the lock date unless it was locked already). Null when there is no such user.
   */
  async countAttempt(id: number, lockAbove: number, now: Date): Promise<AttemptCount | null> {
    const result = await this.repository
      .createQueryBuilder()
      .update(UserRegistry)
      .set({
        failedPasswordCount: () => '"FailedPasswordCount" + 1',
        passwordLocked: () => '"PasswordLocked" OR "FailedPasswordCount" + 1 > :lockAbove',
        passwordLockedDate: () =>
          'CASE WHEN NOT "PasswordLocked" AND "FailedPasswordCount" + 1 > :lockAbove THEN CAST(:now AS timestamptz) ELSE "PasswordLockedDate" END',
      })
      .where('"Id" = :id', { id, lockAbove, now })
      // Sign-in bookkeeping is the service's own, never an administrative change (contract 18).
      .andWhere(SERVICE_CHANGE_CONDITION)
      .returning('"FailedPasswordCount" AS count, "PasswordLocked" AS locked')
      .execute();
    return (result.raw as AttemptCount[])[0] ?? null;
  }

  /** Gives one counted attempt back (never below zero); the count and lock state after it, or null. */
  async uncountAttempt(id: number): Promise<AttemptCount | null> {
    const result = await this.repository
      .createQueryBuilder()
      .update(UserRegistry)
      .set({ failedPasswordCount: () => 'GREATEST("FailedPasswordCount" - 1, 0)' })
      .where('"Id" = :id', { id })
      .andWhere(SERVICE_CHANGE_CONDITION)
      .returning('"FailedPasswordCount" AS count, "PasswordLocked" AS locked')
      .execute();
    return (result.raw as AttemptCount[])[0] ?? null;
  }

  /** Whether the account is locked; true for no such user. */
  async isLocked(id: number): Promise<boolean> {
    const row = await this.repository.findOne({ select: { passwordLocked: true }, where: { id } });
    return row?.passwordLocked ?? true;
  }

  /** Locks the account unless it is locked already (keeping the first lock date). */
  async lock(id: number, now: Date): Promise<void> {
    await this.repository
      .createQueryBuilder()
      .update(UserRegistry)
      .set({ passwordLocked: true, passwordLockedDate: now })
      .where('"Id" = :id AND NOT "PasswordLocked"', { id })
      .andWhere(SERVICE_CHANGE_CONDITION)
      .execute();
  }

  /**
   * A successful sign-in: the count reset and LastLoginDate written, only while the account is not
   * locked and (when `countAtMost` is given) its count is at most that. False when it was not clear.
   */
  async recordSuccess(id: number, now: Date, countAtMost: number | null, tx?: EntityManager): Promise<boolean> {
    const query = this.on(tx)
      .createQueryBuilder()
      .update(UserRegistry)
      .set({ failedPasswordCount: 0, lastLoginDate: now })
      .where('"Id" = :id AND NOT "PasswordLocked"', { id })
      .andWhere(SERVICE_CHANGE_CONDITION);
    if (countAtMost !== null) query.andWhere('"FailedPasswordCount" <= :countAtMost', { countAtMost });
    const result = await query.returning('"Id"').execute();
    return (result.raw as unknown[]).length > 0;
  }

  /** Stores a new password hash with its dates; `wirePasswordHash` undefined leaves that flag as it is. */
  async setPassword(
    id: number,
    password: { hash: string; createdDate: Date; expiryDate: Date; wirePasswordHash?: boolean },
    tx?: EntityManager,
  ): Promise<void> {
    await this.on(tx).update(
      { id },
      {
        password: password.hash,
        passwordCreatedDate: password.createdDate,
        passwordExpiryDate: password.expiryDate,
        ...(password.wirePasswordHash !== undefined ? { wirePasswordHash: password.wirePasswordHash } : {}),
      },
    );
  }

  private withRoleAndTenant(): SelectQueryBuilder<UserRegistry> {
    return this.repository
      .createQueryBuilder('u')
      .innerJoin(RoleRegistry, 'r', 'r.id = u.roleRegistryId')
      .innerJoin(TenantRegistry, 't', 't.id = r.tenantRegistryId');
  }

  /** One account by `condition` (over `u`, parameter $1), with the columns every sign-in reads (SIGN_IN_ACCOUNT_COLUMNS). */
  private async signInAccount(condition: string, value: string | number): Promise<SignInAccountRow | undefined> {
    const rows = (await this.repository.query(
      `SELECT ${SIGN_IN_ACCOUNT_COLUMNS} FROM "UserRegistry" u ${SIGN_IN_ACCOUNT_JOINS} WHERE ${condition} AND NOT u."Deleted"`,
      [value],
    )) as SignInAccountRow[];
    return rows[0];
  }

  /**
   * The guard's per-request read for a batch of requests (guard/user-state.reader.ts batches them): the
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
