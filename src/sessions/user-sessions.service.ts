import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { TargetUsers } from '../users/target-users';
import { SessionCookies } from '../guard/cookies';
import type { Principal } from '../access/principal';
import { SESSION_ID } from '../guard/token.service';
import { adminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { Clock } from '../common/clock';
import { notFound, unauthorized } from '../common/problem';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SessionOwner, SessionRevocation } from '../session-store/session-revocation.service';
import { SessionListRow, UserSessionRepository } from '../session-store/user-session.repository';

/** A session as the lists show it (contract 14). */
export interface SessionView extends SessionListRow {
  /** The session of this very request (always false in an administrator's list). */
  current: boolean;
}

const NO_SESSION = 'No such session.';

/**
 * Active sessions seen and ended one at a time (contract 14): a user's own (JWT callers only; an API
 * key has no session), and an administrator's view of a user within reach (the tenant scope of
 * contract 6: anything else is 404, as if absent).
 */
@Injectable()
export class UserSessions {
  private readonly logger = new Logger('UserSessions');

  constructor(
    private readonly sessions: UserSessionRepository,
    private readonly revocation: SessionRevocation,
    private readonly targets: TargetUsers,
    private readonly cookies: SessionCookies,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  async listOwn(caller: Principal): Promise<SessionView[]> {
    const current = ownSession(caller);
    const rows = await this.sessions.listOpen(caller.userRegistryId, this.lifetimeStart());
    return rows.map((row) => ({ ...row, current: row.id === current }));
  }

  async endOwn(caller: Principal, sessionId: string, req: Request, res: Response): Promise<void> {
    ownSession(caller);
    const owner = { userRegistryId: caller.userRegistryId, userName: caller.userName, tenantRegistryId: caller.tenantRegistryId };
    await this.end(owner, sessionId, caller, req, res);
  }

  async listOf(caller: Principal, userRegistryId: number): Promise<SessionView[]> {
    const user = await this.targets.find(caller, userRegistryId);
    const rows = await this.sessions.listOpen(user.id, this.lifetimeStart());
    return rows.map((row) => ({ ...row, current: false }));
  }

  async endOf(caller: Principal, userRegistryId: number, sessionId: string, req: Request, res: Response): Promise<void> {
    const user = await this.targets.find(caller, userRegistryId);
    await this.end({ userRegistryId: user.id, userName: user.name, tenantRegistryId: user.tenantRegistryId }, sessionId, caller, req, res);
  }

  /** Sessions that started before this have passed the absolute lifetime: none of their tokens is accepted. */
  private lifetimeStart(): Date {
    return new Date(this.clock.nowMs() - this.settings.sessionAbsoluteLifetimeMs);
  }

  private async end(owner: SessionOwner, rawId: string, caller: Principal, req: Request, res: Response): Promise<void> {
    // A malformed id is unknown (404), and never reaches PostgreSQL's uuid parser.
    const sessionId = rawId.toLowerCase();
    if (!SESSION_ID.test(sessionId)) throw notFound(NO_SESSION);
    const ended = await this.revocation.endOne(owner, sessionId, {
      userName: caller.userName,
      context: requestContext(req),
      // Contract 18: a session is named by its id (TargetName), TargetId null.
      inTransaction: (tx) =>
        this.adminChanges.record(tx, adminActor(caller, req), {
          actionType: ActionTypeId.SessionEnded,
          targetTable: 'UserSession',
          targetId: null,
          targetName: sessionId,
          targetTenantRegistryId: owner.tenantRegistryId,
          changes: changesText({ endReasonId: null, endedByUser: null }, { endReasonId: 4, endedByUser: caller.userName }),
        }),
    });
    if (!ended) throw notFound(NO_SESSION);
    this.logger.log(`session ${sessionId} of user ${owner.userRegistryId} ended by ${caller.userName}`);
    if (sessionId === caller.sessionId) {
      // The caller ended the session it is using: its cookies go, including the refresh just set.
      res.removeHeader('Set-Cookie');
      this.cookies.clear(req, res);
    }
  }
}

/** The caller's own session id; an API-key caller has none and is refused (401, contract 14). */
function ownSession(caller: Principal): string {
  if (caller.sessionId === null) throw unauthorized('Only a signed-in session (not an API key) has sessions.');
  return caller.sessionId;
}
