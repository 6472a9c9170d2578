import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { EntityManager, IsNull, MoreThan, Repository } from 'typeorm';
import { AUTHENTICATION_TYPE_NAMES, AuthenticationTypeId, LogoutReasonId } from '../sign-in-trail/audit.types';
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
  /** The session's id when it had to be known before the session starts (a sign-in's forced password change records it); otherwise a new one. */
  id?: string;
}

/**
 * Every query on UserSession but the guard's read (contract 14). Ending statements are single UPDATEs
 * guarded by `EndedDate IS NULL`, so two ends racing each other end a session once and record it
 * once. The per-request check of a session rides in the guard's batched user read
 * (UserRegistryRepository.readForGuard: one statement per batch is what keeps a request cheap), and
 * LastSeenDate noted by the guard is written here in bulk (src/guard/session-activity.writer.ts).
 */
@Injectable()
export class UserSessionRepository {
  constructor(@InjectRepository(UserSession) private readonly repository: Repository<UserSession>) {}

  private on(tx?: EntityManager): Repository<UserSession> {
    return tx ? tx.getRepository(UserSession) : this.repository;
  }

  /** Opens a session; its id is a random UUID, the `sid` of every token of the session. */
  async start(session: NewSession, tx?: EntityManager): Promise<string> {
    const id = session.id ?? randomUUID();
    await this.on(tx).insert({
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
  async listOpen(userRegistryId: number, startedAfter: Date): Promise<SessionListRow[]> {
    const rows = await this.repository.find({
      select: { id: true, createdDate: true, lastSeenDate: true, remoteIp: true, userAgent: true, authenticationTypeId: true },
      where: { userRegistryId, endedDate: IsNull(), createdDate: MoreThan(startedAfter) },
      order: { createdDate: 'DESC', id: 'ASC' },
    });
    return rows.map((row) => ({
      id: row.id,
      createdDate: row.createdDate,
      lastSeenDate: row.lastSeenDate,
      remoteIp: row.remoteIp,
      userAgent: row.userAgent,
      authenticationTypeId: row.authenticationTypeId,
      authenticationType: AUTHENTICATION_TYPE_NAMES[row.authenticationTypeId] ?? 'Unknown',
    }));
  }

  /** Ends one open session of the user (EndReasonId 4); null when the user has no such open session. */
  async endOne(id: string, userRegistryId: number, endedByUser: string, now: Date, tx?: EntityManager): Promise<EndedSession | null> {
    const result = await this.on(tx)
      .createQueryBuilder()
      .update()
      .set({ endedDate: now, endReasonId: LogoutReasonId.SessionEnded, endedByUser: boundText(endedByUser, BOUNDS.name) })
      .where('"Id" = :id AND "UserRegistryId" = :userRegistryId AND "EndedDate" IS NULL', { id, userRegistryId })
      .returning('"Id", "TenantRegistryId", "CreatedDate"')
      .execute();
    const row = (result.raw as { Id: string; TenantRegistryId: number | null; CreatedDate: Date }[])[0];
    return row ? { id: row.Id, tenantRegistryId: row.TenantRegistryId, createdDate: new Date(row.CreatedDate) } : null;
  }

  /**
   * Ends every open session of the user with `reasonId`; answers when each of them had started (so
   * the UserLogout row can say when the cut sessions began).
   */
  async endAllOf(userRegistryId: number, reasonId: LogoutReasonId, endedByUser: string, now: Date, tx?: EntityManager): Promise<Date[]> {
    const result = await this.on(tx)
      .createQueryBuilder()
      .update()
      .set({ endedDate: now, endReasonId: reasonId, endedByUser: boundText(endedByUser, BOUNDS.name) })
      .where('"UserRegistryId" = :userRegistryId AND "EndedDate" IS NULL', { userRegistryId })
      .returning('"CreatedDate"')
      .execute();
    return (result.raw as { CreatedDate: Date }[]).map((row) => new Date(row.CreatedDate));
  }

  /**
   * Deletes sessions ended before `horizon`: those ended explicitly, and those never ended that
   * started before `startedBefore` (they ended by reaching the absolute lifetime before the horizon).
   * Answers how many rows went.
   */
  async deleteEndedBefore(horizon: Date, startedBefore: Date): Promise<number> {
    const result = await this.repository
      .createQueryBuilder()
      .delete()
      .where('("EndedDate" IS NOT NULL AND "EndedDate" < :horizon) OR ("EndedDate" IS NULL AND "CreatedDate" < :startedBefore)', {
        horizon,
        startedBefore,
      })
      .execute();
    return result.affected ?? 0;
  }

  /**
   * Moves LastSeenDate forward for each open session of `ids` to its `seen` instant, only where the
   * stored value is at least `periodMs` older (so several nodes together write at most once a period).
   * Raw SQL: one UPDATE … FROM unnest(ids, dates) for every session noted since the last write, which
   * has no QueryBuilder form; one UPDATE per session would put a statement per active session on
   * every write.
   */
  async recordLastSeen(ids: string[], seen: Date[], periodMs: number): Promise<void> {
    await this.repository.query(
      `UPDATE "UserSession" s SET "LastSeenDate" = u.seen
         FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, seen)
        WHERE s."Id" = u.id AND s."EndedDate" IS NULL AND s."LastSeenDate" <= u.seen - make_interval(secs => $3)`,
      [ids, seen, periodMs / 1000],
    );
  }
}
