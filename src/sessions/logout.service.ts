import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { LogoutOutcomeId, LogoutReasonId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { Authenticator, presentedCredential } from '../auth/authenticator.service';
import { SessionCookies } from '../auth/cookies';
import { JwtStrategy } from '../auth/jwt.strategy';
import { Clock } from '../common/clock';
import { RequestContext, requestContext } from '../common/request-context';
import { SessionOwner, SessionRevocation } from './session-revocation.service';

export const LOGOUT_WARNING_HEADER = 'X-Service-Logout-Warning';
/** Rows for callers without a session: at most one per address per this period (service.md 2.4). */
export const ANONYMOUS_LOGOUT_PERIOD_MS = 60_000;
/** Addresses remembered for that limit; the oldest are forgotten first. */
export const ANONYMOUS_LOGOUT_MEMORY = 10_000;

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
  /** Remote address → when its last anonymous row was written (Clock ms), oldest first. */
  private readonly anonymousRows = new Map<string, number>();

  constructor(
    private readonly authenticator: Authenticator,
    private readonly jwt: JwtStrategy,
    private readonly cookies: SessionCookies,
    private readonly revocation: SessionRevocation,
    private readonly audit: AuditWriter,
    private readonly clock: Clock,
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
    try {
      await this.revocation.revokeAll(session.owner, {
        reasonId: LogoutReasonId.UserLogout,
        context,
        sessionStartDate: session.sessionStart,
      });
      this.logger.log(`user ${session.owner.userRegistryId} logged out`);
      return 'revoked';
    } catch (error) {
      res.setHeader(LOGOUT_WARNING_HEADER, 'revocation-failed');
      this.logger.error(
        `logout of user ${session.owner.userRegistryId}: the revocation could not be written, the token stays valid until it expires: ${(error as Error).message}`,
      );
      await this.recordFailure(session, context);
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

  private async recordFailure(session: PresentedSession, context: RequestContext): Promise<void> {
    try {
      await this.audit.logout({
        createdUser: session.owner.userName,
        userRegistryId: session.owner.userRegistryId,
        tenantRegistryId: session.owner.tenantRegistryId,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.RevocationFailed,
        context,
        sessionStartDate: session.sessionStart,
        message: 'The revocation could not be written; the token stays valid until it expires.',
      });
    } catch (error) {
      this.logger.error(`logout of user ${session.owner.userRegistryId}: the failure row could not be written either: ${(error as Error).message}`);
    }
  }

  private async recordWithoutSession(context: RequestContext): Promise<void> {
    if (!this.claimAnonymousRow(context.remoteIp ?? '')) return;
    try {
      await this.audit.logout({
        createdUser: null,
        userRegistryId: null,
        tenantRegistryId: null,
        reasonId: LogoutReasonId.UserLogout,
        outcomeId: LogoutOutcomeId.NoSession,
        context,
        sessionStartDate: null,
      });
    } catch (error) {
      this.logger.error(`logout without a session: the row could not be written: ${(error as Error).message}`);
    }
  }

  /** True when this address has had no anonymous row within the last minute; remembers it. */
  private claimAnonymousRow(address: string): boolean {
    const now = this.clock.nowMs();
    // Forget what is older than the period (the map is in write order), and beyond the memory bound.
    for (const [known, at] of this.anonymousRows) {
      if (now - at < ANONYMOUS_LOGOUT_PERIOD_MS && this.anonymousRows.size <= ANONYMOUS_LOGOUT_MEMORY) break;
      this.anonymousRows.delete(known);
    }
    const last = this.anonymousRows.get(address);
    if (last !== undefined && now - last < ANONYMOUS_LOGOUT_PERIOD_MS && now >= last) return false;
    this.anonymousRows.delete(address);
    this.anonymousRows.set(address, now);
    while (this.anonymousRows.size > ANONYMOUS_LOGOUT_MEMORY) {
      this.anonymousRows.delete(this.anonymousRows.keys().next().value!);
    }
    return true;
  }
}
