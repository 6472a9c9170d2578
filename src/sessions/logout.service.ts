import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { LogoutOutcomeId, LogoutReasonId } from '../sign-in-trail/audit.types';
import { AuditWriter, LogoutIdentity } from '../sign-in-trail/audit.writer';
import { Authenticator, presentedCredential } from '../guard/authenticator.service';
import { SessionCookies } from '../guard/cookies';
import { JwtVerifier } from '../guard/jwt-verifier';
import { isCommitNotConfirmed, isDatabaseUnavailable } from '../database/deadlines';
import { RequestContext, requestContext } from '../common/request-context';
import { AnonymousLogoutLimiter } from './anonymous-logout.limiter';
import { SessionOwner, SessionRevocation } from '../session-store/session-revocation.service';

export const LOGOUT_WARNING_HEADER = 'X-Service-Logout-Warning';

export type LogoutResult = 'revoked' | 'noSession' | 'revocationFailed';

interface PresentedSession {
  owner: SessionOwner;
  sessionStart: Date;
}

/**
 * POST /api/Authentication/Logout (service.md 3.2, contract 4). Always deletes both cookies and
 * answers 200, whatever happens (fail closed for the browser). A valid session is revoked
 * (TokensValidFrom, UserLogout 1/1, streams closed on every node); no session leaves one rate-limited
 * row (1/2); a revocation that cannot be written is reported in a header, logged at ERROR and
 * recorded when possible (1/3).
 */
@Injectable()
export class LogoutService {
  private readonly logger = new Logger('Logout');
  constructor(
    private readonly authenticator: Authenticator,
    private readonly jwt: JwtVerifier,
    private readonly cookies: SessionCookies,
    private readonly revocation: SessionRevocation,
    private readonly audit: AuditWriter,
    private readonly anonymous: AnonymousLogoutLimiter,
  ) {}

  async logout(req: Request, res: Response): Promise<LogoutResult> {
    const context = requestContext(req);
    let session: PresentedSession | null = null;
    try {
      session = await this.presentedSession(req);
    } finally {
      this.cookies.clear(req, res);
    }
    if (!session) {
      await this.recordWithoutSession(context);
      return 'noSession';
    }
    // One logout, one UserLogout row: the revocation's, or the one saying it could not be written, as
    // the same row (identity), so a revocation committed after its deadline is not recorded twice.
    const identity = this.audit.identity();
    try {
      await this.revocation.revokeAll(session.owner, {
        reasonId: LogoutReasonId.UserLogout,
        context,
        sessionStartDate: session.sessionStart,
        identity,
      });
      this.logger.log(`user ${session.owner.userRegistryId} logged out`);
      return 'revoked';
    } catch (error) {
      if (isCommitNotConfirmed(error)) {
        // PostgreSQL committed the revocation and its UserLogout row on the primary; only the synchronous
        // standby's confirmation is missing (it is away). Recording a failure beside them would
        // contradict the trail; a failover before the standby catches up could lose both (README, PostgreSQL high availability).
        this.logger.warn('logout while the synchronous standby does not answer: the revocation is committed on the primary only');
        await this.revocation.announceEnded(session.owner.userRegistryId);
        return 'revoked';
      }
      res.setHeader(LOGOUT_WARNING_HEADER, 'revocation-failed');
      if (isDatabaseUnavailable(error)) {
        // An outage: every logout meets it. One constant warning (the logger counts the repeats) rather
        // than an ERROR per request; the UserLogout row (OutcomeId 3) names the user.
        this.logger.warn('logout during a database outage: the revocation could not be written, the token stays valid until it expires (UserLogout OutcomeId 3)');
      } else {
        this.logger.error(
          `logout of user ${session.owner.userRegistryId}: the revocation could not be written, the token stays valid until it expires: ${(error as Error).message}`,
        );
      }
      await this.recordFailure(session, context, identity);
      // The browser is logged out anyway; its streams need not outlive it.
      await this.revocation.announceEnded(session.owner.userRegistryId);
      return 'revocationFailed';
    }
  }

  /**
   * The session the request presents, or null (missing, malformed, expired, revoked). An x-api-key
   * request is not a browser session. When the user row cannot be read, the token's own signature
   * still says whose session it is, so its revocation is attempted (and reported if it fails).
   */
  private async presentedSession(req: Request): Promise<PresentedSession | null> {
    const credential = presentedCredential(req);
    if (!credential || credential.type === 'ApiKey') return null;
    try {
      const principal = await this.authenticator.tryAuthenticate(req);
      if (!principal || !principal.sessionStartDate) return null;
      return {
        owner: { userRegistryId: principal.userRegistryId, userName: principal.userName, tenantRegistryId: principal.tenantRegistryId },
        sessionStart: principal.sessionStartDate,
      };
    } catch (error) {
      const claims = await this.jwt.verify(credential.value);
      if (!claims) return null;
      this.logger.warn(`logout: the session of user ${claims.sub} could not be checked: ${(error as Error).message}`);
      return {
        owner: { userRegistryId: Number(claims.sub), userName: String(claims.name ?? ''), tenantRegistryId: null },
        sessionStart: new Date(claims.sst),
      };
    }
  }

  /**
   * Kept and written on recovery when the database cannot take it now, as the revocation's row
   * (`identity`): skipped if the revocation did commit after all.
   */
  private async recordFailure(session: PresentedSession, context: RequestContext, identity: LogoutIdentity): Promise<void> {
    await this.audit.logoutEventually({
      ...identity,
      createdUser: session.owner.userName,
      userRegistryId: session.owner.userRegistryId,
      tenantRegistryId: session.owner.tenantRegistryId,
      reasonId: LogoutReasonId.UserLogout,
      outcomeId: LogoutOutcomeId.RevocationFailed,
      context,
      sessionStartDate: session.sessionStart,
      message: 'The revocation could not be written; the token stays valid until it expires.',
    });
  }

  private async recordWithoutSession(context: RequestContext): Promise<void> {
    // Once a minute per client address, across every node (contract 13).
    if (!(await this.anonymous.claim(context.remoteIp))) return;
    await this.audit.logoutEventually({
      createdUser: null,
      userRegistryId: null,
      tenantRegistryId: null,
      reasonId: LogoutReasonId.UserLogout,
      outcomeId: LogoutOutcomeId.NoSession,
      context,
      sessionStartDate: null,
    });
  }
}
