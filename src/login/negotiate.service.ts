import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationTypeId, FailureTypeId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { IssuedToken } from '../auth/token.service';
import { ProblemError, serviceUnavailable } from '../common/problem';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { MfaProvider } from '../mfa/mfa.provider';
import { ReservedAttempt, SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { NegotiateStrategy, userNameOfPrincipal } from './negotiate.strategy';
import { SIGN_IN_FAILED } from './sign-in-scheme';
import { SignInCompletion } from './sign-in-completion.service';
import { SignInThrottle } from './sign-in-throttle.service';

export type NegotiateSignInResult =
  | { kind: 'signedIn'; issued: IssuedToken; responseToken: string | null }
  | { kind: 'mfaRequired'; responseToken: string | null };

/** A 401 that restarts the handshake: the browser answers `Negotiate` with a fresh token. */
export function negotiateChallenge(detail = SIGN_IN_FAILED): ProblemError {
  return new ProblemError(401, 'Unauthorized', detail, { headers: { 'WWW-Authenticate': 'Negotiate' } });
}

/**
 * Negotiate (integrated operating-system) sign-in (service.md 5.2, contract 7 and 12). The Kerberos
 * principal, realm stripped, is matched case-insensitively to an Active, unlocked user; no account is
 * ever created. Failures write UserLogin rows with AuthenticationTypeId 2 and FailureTypeId 1-3 (11
 * for a rejected passcode); a handshake that does not complete has no identity to record and answers
 * 401 with a fresh challenge. With the second factor enabled the GET answers 202, and the passcode is
 * posted under a new handshake (every request proves the identity again; nothing is remembered
 * between the two requests, so any node can serve either).
 */
@Injectable()
export class NegotiateSignIn implements OnApplicationBootstrap {
  private readonly logger = new Logger('Negotiate');

  constructor(
    private readonly strategy: NegotiateStrategy,
    private readonly accounts: UserAccounts,
    private readonly audit: AuditWriter,
    private readonly completion: SignInCompletion,
    private readonly mfa: MfaProvider,
    private readonly throttle: SignInThrottle,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.negotiateAuthentication && !this.strategy.available()) {
      this.logger.error('NegotiateAuthentication is on but the kerberos module is not available: every Negotiate sign-in will fail');
    }
  }

  /**
   * GET ByNegotiate (`passcode` undefined) or POST ByNegotiateMfa (`passcode` given). Throws a 401
   * problem carrying `WWW-Authenticate: Negotiate` on every failure.
   */
  async signIn(req: Request, res: Response, passcode?: string): Promise<NegotiateSignInResult> {
    // Before the ticket is even accepted: an address past SignInThrottle gets 429 (contract 13).
    const ticket = await this.throttle.enter(req, AuthenticationTypeId.Negotiate, null);
    const outcome = await this.strategy.accept(req.get('authorization'));
    if (outcome.kind === 'challenge') {
      // The first leg of every browser's handshake: no attempt yet, nothing counted.
      await ticket.release();
      throw negotiateChallenge('Negotiate authentication is required.');
    }
    if (outcome.kind === 'refused') throw negotiateChallenge();
    // The ticket could not be checked (the acceptor timed out or is saturated): fail closed, honestly.
    if (outcome.kind === 'unavailable') throw serviceUnavailable('The Negotiate ticket could not be checked right now.');

    const context = requestContext(req);
    const userName = userNameOfPrincipal(outcome.principal);
    const account = await this.accounts.findByName(userName);
    const fail = async (failureTypeId: FailureTypeId, matched: SignInAccount | null): Promise<never> => {
      await this.audit.login({
        createdUser: matched?.name ?? userName,
        userRegistryId: matched?.id ?? null,
        tenantRegistryId: matched?.tenantRegistryId ?? null,
        authenticationTypeId: AuthenticationTypeId.Negotiate,
        failureTypeId,
        context,
      });
      throw negotiateChallenge();
    };
    if (!account) return fail(FailureTypeId.NoUser, null);
    if (!account.active) return fail(FailureTypeId.NotActive, account);
    if (account.passwordLocked) return fail(FailureTypeId.PasswordLocked, account);

    let reserved: ReservedAttempt | null = null;
    if (this.settings.enableMultifactorAuthentication) {
      if (passcode === undefined) {
        await ticket.release();
        return { kind: 'mfaRequired', responseToken: outcome.responseToken };
      }
      // Counted before the verify, like a password (contract 13): an attempt past the threshold, or on
      // an account locked meanwhile, is refused without asking the provider.
      reserved = await this.accounts.reserveAttempt(account.id);
      if (!reserved.mayVerify) {
        await this.accounts.releaseAttempt(account.id);
        return fail(FailureTypeId.PasswordLocked, account);
      }
      const { ok } = await this.mfa.verify({ userName: account.name, passcode });
      if (!ok) {
        await this.accounts.lockIfExceeded(account.id, reserved.count);
        return fail(FailureTypeId.SecondFactorRejected, account);
      }
    }
    if (!(await this.accounts.recordSuccess(account.id, reserved))) return fail(FailureTypeId.PasswordLocked, account);
    const issued = await this.completion.complete(account, AuthenticationTypeId.Negotiate, req, res);
    await ticket.release();
    return { kind: 'signedIn', issued, responseToken: outcome.responseToken };
  }

  get enabled(): boolean {
    return this.settings.negotiateAuthentication;
  }

  get secondFactorEnabled(): boolean {
    return this.settings.enableMultifactorAuthentication;
  }
}
