import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EntityManager } from 'typeorm';
import { AuthenticationTypeId } from '../sign-in-trail/audit.types';
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
 * The end every successful sign-in shares, whatever the scheme: the sign-in's UserLogin row (written
 * by SignInFlow, `recordSignIn`) and the new UserSession row in one transaction (before the answer),
 * then the service's own JWT, naming that session (`sid`), and both cookies. Used by SignInFlow only
 * (`SignInFlow.complete`), after the success was recorded (`UserAccounts.recordSuccess`, refused when
 * it raced the lock, contract 13).
 */
@Injectable()
export class SignInCompletion {
  constructor(
    private readonly tokens: TokenService,
    private readonly cookies: SessionCookies,
    private readonly sessions: UserSessionRepository,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
  ) {}

  async complete(
    identity: EstablishedIdentity,
    type: AuthenticationTypeId,
    req: Request,
    res: Response,
    recordSignIn: (manager: EntityManager) => Promise<void>,
    /** A statement to run first in the same transaction (the sign-in's success); throwing rolls all back. */
    first?: (manager: EntityManager) => Promise<void>,
    /** The new session's id, when something before it had to name it; otherwise a new one. */
    chosenSessionId?: string,
  ): Promise<IssuedToken> {
    const context = requestContext(req);
    const start = this.clock.now();
    const sessionId = await this.transactions.run(async (manager) => {
      await first?.(manager);
      await recordSignIn(manager);
      return this.sessions.start(
        { userRegistryId: identity.id, tenantRegistryId: identity.tenantRegistryId, authenticationTypeId: type, start, context, id: chosenSessionId },
        manager,
      );
    });
    const issued = this.tokens.issue({ id: identity.id, name: identity.name }, { id: sessionId, startMs: start.getTime() });
    this.cookies.set(req, res, issued);
    return issued;
  }
}
