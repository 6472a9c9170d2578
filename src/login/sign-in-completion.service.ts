import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationTypeId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { SessionCookies } from '../guard/cookies';
import { IssuedToken, TokenService } from '../guard/token.service';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';
import { requestContext } from '../common/request-context';
import { UserSessionRepository } from '../session-store/user-session.repository';

/** An identity established by any scheme. */
export interface EstablishedIdentity {
  id: number;
  name: string;
  tenantRegistryId: number;
}

/**
 * The end every successful sign-in shares, whatever the scheme: the UserLogin row and the new
 * UserSession row written together (before the answer), then the service's own JWT, naming that
 * session (`sid`), and both cookies. The caller has recorded the success first
 * (`UserAccounts.recordSuccess`, refused when it raced the lock, contract 13): SignInFlow for every
 * sign-in, PasswordChange for a signed-in caller's password change.
 */
@Injectable()
export class SignInCompletion {
  constructor(
    private readonly audit: AuditWriter,
    private readonly tokens: TokenService,
    private readonly cookies: SessionCookies,
    private readonly sessions: UserSessionRepository,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
  ) {}

  async complete(identity: EstablishedIdentity, type: AuthenticationTypeId, req: Request, res: Response): Promise<IssuedToken> {
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
}
