import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, EntityManager } from 'typeorm';
import { AUTHENTICATION_TYPE_NAMES, AuthenticationTypeId, LogoutReasonId } from '../audit/audit.types';
import { RequestContext } from '../common/request-context';
import { BOUNDS, boundText } from '../common/text';
import { UserSession } from './user-session.entity';

/** A session as the session lists show it (contract 14), before `current` is known. */
export interface SessionListRow {
  id: string;
  createdDate: Date;
  lastSeenDate: Date;
  remoteIp: string | null;
  userAgent: string | null;
  authenticationTypeId: number;
  authenticationType: string;
}

/** A session just ended by one statement: what its UserLogout row needs. */
export interface EndedSession {
  id: string;
  userRegistryId: number;
  tenantRegistryId: number | null;
  createdDate: Date;
}

export interface NewSession {
  userRegistryId: number;
  tenantRegistryId: number | null;
  authenticationTypeId: AuthenticationTypeId;
  /** The session start, which every token of the session carries as `sst`. */
  start: Date;
  context: RequestContext;
}

/** The scheme names, as one SQL CASE over constants (no table of names to join). */
const AUTHENTICATION_TYPE_SQL = `CASE "AuthenticationTypeId" ${Object.entries(AUTHENTICATION_TYPE_NAMES)
  .map(([id, name]) => `WHEN ${Number(id)} THEN '${name.replace(/'/g, "''")}'`)
  .join(' ')} END`;

const LIST_COLUMNS = `"Id" AS id, "CreatedDate" AS "createdDate", "LastSeenDate" AS "lastSeenDate", "RemoteIp" AS "remoteIp",
  "UserAgent" AS "userAgent", "AuthenticationTypeId"::int AS "authenticationTypeId", ${AUTHENTICATION_TYPE_SQL} AS "authenticationType"`;

const ENDED_COLUMNS = `"Id" AS id, "UserRegistryId" AS "userRegistryId", "TenantRegistryId" AS "tenantRegistryId", "CreatedDate" AS "createdDate"`;

/**
 * The UserSession table (contract 14). Ending statements are single UPDATEs guarded by
 * `"EndedDate" IS NULL`, so two ends racing each other end a session once and record it once.
 * The per-request check of a session is not here: it rides in the guard's batched user read
 * (src/auth/user-state.reader.ts), and LastSeenDate is written by SessionActivityWriter.
 */
@Injectable()
export class UserSessionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Opens a session; its id is a random UUID, the `sid` of every token of the session. */
  async start(session: NewSession, manager: EntityManager = this.dataSource.manager): Promise<string> {
    const id = randomUUID();
    await manager.insert(UserSession, {
      id,
      userRegistryId: session.userRegistryId,
      tenantRegistryId: session.tenantRegistryId,
      authenticationTypeId: session.authenticationTypeId,
      createdDate: session.start,
      lastSeenDate: session.start,
      remoteIp: boundText(session.context.remoteIp, BOUNDS.ip),
      userAgent: boundText(session.context.userAgent, BOUNDS.userAgent),
      endedDate: null,
      endReasonId: null,
      endedByUser: null,
    });
    return id;
  }

  /**
   * The user's sessions not ended, newest first. Only those started after `startedAfter`: older ones
   * have passed the absolute lifetime, so no token of theirs is accepted any more.
   */
  listOpen(userRegistryId: number, startedAfter: Date): Promise<SessionListRow[]> {
    return this.dataSource.query(
      `SELECT ${LIST_COLUMNS} FROM "UserSession"
        WHERE "UserRegistryId" = $1 AND "EndedDate" IS NULL AND "CreatedDate" > $2
        ORDER BY "CreatedDate" DESC, "Id"`,
      [userRegistryId, startedAfter],
    );
  }

  /** Ends one open session of the user (EndReasonId 4); null when there is no such open session. */
  async endOne(
    id: string,
    userRegistryId: number,
    endedByUser: string,
    now: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<EndedSession | null> {
    const rows: EndedSession[] = await manager.query(
      `WITH ended AS (
         UPDATE "UserSession" SET "EndedDate" = $3, "EndReasonId" = $4, "EndedByUser" = $5
          WHERE "Id" = $1 AND "UserRegistryId" = $2 AND "EndedDate" IS NULL
         RETURNING ${ENDED_COLUMNS})
       SELECT * FROM ended`,
      [id, userRegistryId, now, LogoutReasonId.SessionEnded, boundText(endedByUser, BOUNDS.name)],
    );
    return rows[0] ?? null;
  }

  /** Ends every open session of the user with `reasonId`; answers how many it ended. */
  async endAllOf(
    userRegistryId: number,
    reasonId: LogoutReasonId,
    endedByUser: string,
    now: Date,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<number> {
    const rows: { id: string }[] = await manager.query(
      `WITH ended AS (
         UPDATE "UserSession" SET "EndedDate" = $2, "EndReasonId" = $3, "EndedByUser" = $4
          WHERE "UserRegistryId" = $1 AND "EndedDate" IS NULL
         RETURNING "Id")
       SELECT "Id" AS id FROM ended`,
      [userRegistryId, now, reasonId, boundText(endedByUser, BOUNDS.name)],
    );
    return rows.length;
  }

  /**
   * Deletes sessions ended before `horizon`: those ended explicitly, and those never ended that
   * started before `startedBefore` (they ended by reaching the absolute lifetime before the horizon).
   * Answers how many rows went.
   */
  async deleteEndedBefore(horizon: Date, startedBefore: Date): Promise<number> {
    const rows: { n: number }[] = await this.dataSource.query(
      `WITH gone AS (
         DELETE FROM "UserSession"
          WHERE ("EndedDate" IS NOT NULL AND "EndedDate" < $1) OR ("EndedDate" IS NULL AND "CreatedDate" < $2)
         RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [horizon, startedBefore],
    );
    return rows[0]?.n ?? 0;
  }
}
