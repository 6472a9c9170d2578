import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationTypeId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { SessionCookies } from '../auth/cookies';
import { IssuedToken, TokenService } from '../auth/token.service';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { UserSessionRepository } from '../sessions/user-session.repository';
import { ReservedAttempt, UserAccounts } from '../users/user-accounts.service';

/** An identity established by any scheme. */
export interface EstablishedIdentity {
  id: number;
  name: string;
  tenantRegistryId: number;
}

/**
 * The end every successful sign-in shares, whatever the scheme: the failure count reset, the
 * UserLogin row and the new UserSession row written together (before the answer), then the service's
 * own JWT, naming that session (`sid`), and both cookies.
 * The reset is conditional (contract 13): a success that raced the lock answers null, and the caller
 * refuses it as a locked account (FailureTypeId 3) without issuing anything. A flow that must decide
 * the success before changing anything (a password change at sign-in) records it itself first.
 */
@Injectable()
export class SignInCompletion {
  constructor(
    private readonly accounts: UserAccounts,
    private readonly audit: AuditWriter,
    private readonly tokens: TokenService,
    private readonly cookies: SessionCookies,
    private readonly sessions: UserSessionRepository,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    @Inject(SETTINGS) readonly settings: AppSettings,
  ) {}

  async complete(
    identity: EstablishedIdentity,
    type: AuthenticationTypeId,
    req: Request,
    res: Response,
    success: { attempt?: ReservedAttempt | null; alreadyRecorded?: boolean } = {},
  ): Promise<IssuedToken | null> {
    if (!success.alreadyRecorded && !(await this.accounts.recordSuccess(identity.id, success.attempt ?? null))) return null;
    const context = requestContext(req);
    const start = this.clock.now();
    const sessionId = await this.transactions.run(async (manager) => {
      await this.audit.login(
        {
          createdUser: identity.name,
          userRegistryId: identity.id,
          tenantRegistryId: identity.tenantRegistryId,
          authenticationTypeId: type,
          failureTypeId: null,
          context,
        },
        manager,
      );
      return this.sessions.start(
        { userRegistryId: identity.id, tenantRegistryId: identity.tenantRegistryId, authenticationTypeId: type, start, context },
        manager,
      );
    });
    const issued = this.tokens.issue({ id: identity.id, name: identity.name }, { id: sessionId, startMs: start.getTime() });
    this.cookies.set(req, res, issued);
    return issued;
  }

  /** Username/password routes exist only when neither OAuth nor Negotiate is enabled (service.md 5.2). */
  get passwordSchemeEnabled(): boolean {
    return !this.settings.oauthAuthentication && !this.settings.negotiateAuthentication;
  }
}
