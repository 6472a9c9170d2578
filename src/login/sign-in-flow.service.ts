import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { EntityManager } from 'typeorm';
import { AuthenticationTypeId, FailureTypeId } from '../sign-in-trail/audit.types';
import { AuditWriter } from '../sign-in-trail/audit.writer';
import { messageOf } from '../common/errors';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import type { IssuedToken } from '../guard/token.service';
import { MfaProvider } from '../mfa/mfa.provider';
import { PasskeyFactor } from '../passkeys/passkey-factor';
import { ReservedAttempt, SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { LockoutGuard } from './lockout-guard';
import { EstablishedIdentity, SignInCompletion } from './sign-in-completion.service';
import { SignInFailure, SignInResult, SignInScheme } from './sign-in-scheme';
import { SignInThrottle, SignInThrottled } from './sign-in-throttle.service';

/** What a UserLogin row says of a sign-in: who (as far as known) and how it ended (null: signed in). */
interface SignInRow {
  createdUser: string | null;
  account: EstablishedIdentity | null;
  failureTypeId: FailureTypeId | null;
  failureMessage?: string;
}

/**
 * The one sign-in sequence every scheme passes through (docs/decisions/0023-one-sign-in-flow.md):
 * throttle (contract 13), identification by the scheme, the user looked up and checked (NoUser,
 * NotActive, PasswordLocked), a place in the account's failure count before any secret is verified
 * (0012), the scheme's proof, the second factor under that place, the success recorded only if no lock
 * raced it, then the UserLogin row, the UserSession row, the token and the cookies (SignInCompletion).
 * Every refusal is a SignInFailure, written as its UserLogin row here (before the answer) and answered
 * as the scheme says; an address past the throttle is a failure recorded here too. Every UserLogin row
 * is written here (`record`), and nowhere else. A scheme decides none of this ordering.
 */
@Injectable()
export class SignInFlow {
  private readonly logger = new Logger('SignIn');

  constructor(
    private readonly accounts: UserAccounts,
    private readonly audit: AuditWriter,
    private readonly completion: SignInCompletion,
    private readonly lockout: LockoutGuard,
    private readonly mfa: MfaProvider,
    private readonly passkeyFactor: PasskeyFactor,
    private readonly throttle: SignInThrottle,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /** Signs the caller in by `scheme`, or throws the scheme's refusal after writing its UserLogin row. */
  async run<Input, Evidence>(
    scheme: SignInScheme<Input, Evidence>,
    input: Input,
    req: Request,
    res: Response,
  ): Promise<SignInResult<Evidence>> {
    // Before anything is looked up or verified: an address past SignInThrottle gets 429 (contract 13).
    const ticket = await this.admit(scheme, req, scheme.claimedName(input), () => this.throttle.enter(req));
    let failure: SignInFailure;
    try {
      const result = await this.attempt(scheme, input, req, res);
      // A success, or the second-factor prompt (no failure), gives the address's place back.
      await ticket.release();
      return result;
    } catch (error) {
      if (error instanceof SignInFailure) failure = error;
      else if (scheme.unexpected) failure = scheme.unexpected(error, null);
      else throw error;
    }
    if (failure.notAnAttempt) await ticket.release();
    throw await this.refuse(scheme, failure, req);
  }

  /**
   * A step before the sign-in proper (the OIDC start, before the browser is sent to the provider): an
   * address already past the throttle is refused (no place taken), and a SignInFailure of the step is a
   * refusal with its UserLogin row, answered as the scheme says.
   */
  async begin<Input, Evidence, T>(scheme: SignInScheme<Input, Evidence>, req: Request, step: () => Promise<T>): Promise<T> {
    await this.admit(scheme, req, null, () => this.throttle.check(req));
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof SignInFailure)) throw error;
      throw await this.refuse(scheme, error, req);
    }
  }

  /**
   * Starts the session of an identity that went through (its success already recorded): its UserLogin
   * row and its UserSession row in one transaction, the token, the cookies. Every sign-in's end, and
   * ChangePassword's new session.
   */
  complete(
    account: EstablishedIdentity,
    type: AuthenticationTypeId,
    req: Request,
    res: Response,
    first?: (manager: EntityManager) => Promise<void>,
    sessionId?: string,
  ): Promise<IssuedToken> {
    return this.completion.complete(
      account,
      type,
      req,
      res,
      (manager) => this.record(type, { createdUser: account.name, account, failureTypeId: null }, req, manager),
      first,
      sessionId,
    );
  }

  /** Runs a throttle step; an address past the limit is a failure whose row is written before its 429. */
  private async admit<Input, Evidence, T>(scheme: SignInScheme<Input, Evidence>, req: Request, createdUser: string | null, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      if (error instanceof SignInThrottled) await this.record(scheme.type, { createdUser, account: null, failureTypeId: FailureTypeId.Throttled }, req);
      throw error;
    }
  }

  /** Writes the UserLogin row of a refused sign-in and returns what the scheme answers. */
  private async refuse<Input, Evidence>(scheme: SignInScheme<Input, Evidence>, failure: SignInFailure, req: Request): Promise<Error> {
    if (failure.failureTypeId !== null) {
      try {
        await this.recordFailure(scheme, failure, req);
      } catch (error) {
        // A scheme that answers every error as a refusal (a redirect) still answers; the others fail closed.
        if (!scheme.unexpected) throw error;
        this.logger.error(`could not write the failed sign-in row (AuthenticationTypeId ${scheme.type}): ${messageOf(error)}`);
      }
    }
    return scheme.refusal(failure);
  }

  private async attempt<Input, Evidence>(
    scheme: SignInScheme<Input, Evidence>,
    input: Input,
    req: Request,
    res: Response,
  ): Promise<SignInResult<Evidence>> {
    const identified = await scheme.identify(input, req, res);
    const { userName, evidence } = identified;
    let found: SignInAccount | null;
    try {
      // A scheme that read the account with its identification (one round trip) hands it over.
      found = identified.account !== undefined ? identified.account : await this.accounts.findByName(userName);
    } catch (error) {
      throw scheme.unexpected ? scheme.unexpected(error, userName) : error;
    }
    const proof = scheme.proof;

    // Failures decided before any verify count nothing; with a proof they cost one imitation of it, so
    // that the time taken does not tell which users exist.
    const early = !found
      ? FailureTypeId.NoUser
      : !found.active
        ? FailureTypeId.NotActive
        : found.passwordLocked
          ? FailureTypeId.PasswordLocked
          : proof?.missing(evidence)
            ? FailureTypeId.NoPassword
            : null;
    if (early !== null) {
      if (proof) {
        await this.accounts.countNoAttempt();
        await proof.imitate(evidence);
      }
      throw new SignInFailure(early, 'refused before any verify', userName, found);
    }
    const account = found!;
    const refused = (failureTypeId: FailureTypeId): SignInFailure => new SignInFailure(failureTypeId, 'refused', userName, account);

    // Counted before the verify, with the lock read in the same statement (LockoutGuard, contract 13, 0012):
    // an attempt past the threshold, or on an account locked meanwhile, is refused without verifying.
    let reserved: ReservedAttempt | null = null;
    // The proof is right from here on: a step that stops the sign-in takes back its count, unless the
    // lock was reached meanwhile (then the answer must not tell that the proof was right).
    const releaseOrRefuse = async (): Promise<void> => {
      if (reserved && !(await this.accounts.releaseRightAttempt(account.id, reserved))) throw refused(FailureTypeId.PasswordLocked);
    };
    if (proof) {
      const checked = await this.lockout.verify<FailureTypeId>(account.id, { verify: () => proof.verify(account, evidence), imitate: () => proof.imitate(evidence) });
      if (checked.verdict === 'locked') throw refused(FailureTypeId.PasswordLocked);
      if (checked.verdict === 'mismatch') throw refused(checked.failure ?? proof.mismatch);
      reserved = checked.reserved;
      const stop = scheme.afterProof?.(account, input, evidence);
      if (stop) {
        await releaseOrRefuse();
        await this.recordFailure(scheme, refused(stop.failureTypeId), req);
        throw stop.answer;
      }
    }

    // The second factor is verified under the proof's place in the count: a burst of them is bounded
    // exactly like a burst of passwords. A lock set while the proof was checked stops it before it is
    // checked. When identification was the proof, the factor is the secret under the lockout count
    // (LockoutGuard), like a password. `check` answers true or the failure to record.
    const secondFactor = async (check: () => Promise<true | FailureTypeId>): Promise<void> => {
      if (reserved) {
        if (await this.accounts.isLocked(account.id)) {
          await this.accounts.releaseAttempt(account.id);
          throw refused(FailureTypeId.PasswordLocked);
        }
        const verdict = await check();
        if (verdict !== true) {
          // A rejected factor counts toward the lockout (contracts 7 and 20): the attempt keeps its count.
          await this.accounts.lockIfExceeded(account.id, reserved.count);
          throw refused(verdict);
        }
        return;
      }
      const checked = await this.lockout.verify<FailureTypeId>(account.id, { verify: check, imitate: async () => undefined });
      if (checked.verdict === 'locked') throw refused(FailureTypeId.PasswordLocked);
      if (checked.verdict === 'mismatch') throw refused(checked.failure ?? FailureTypeId.SecondFactorRejected);
      reserved = checked.reserved;
    };

    // A passkey, for a scheme that takes one as second factor and a user who holds one (contract 20);
    // the passcode, where on, stays the other way to answer.
    let passkeyVerified = false;
    if (scheme.passkey && (await this.passkeyFactor.applies(account.id))) {
      const answer = scheme.passkey(input);
      if (answer === undefined && !(this.settings.enableMultifactorAuthentication && scheme.passcode?.(input) !== undefined)) {
        await releaseOrRefuse();
        return { kind: 'mfaRequired', evidence, passkey: await this.passkeyFactor.prompt(account.id, req) };
      }
      if (answer !== undefined) {
        await secondFactor(() => this.passkeyFactor.verify(account.id, answer, req));
        passkeyVerified = true;
      }
    }

    // A proof that was both factors (a passkey with user verification) takes no passcode (contract 20).
    if (!passkeyVerified && this.settings.enableMultifactorAuthentication && scheme.passcode && !scheme.bothFactors?.(evidence)) {
      const passcode = scheme.passcode(input);
      if (passcode === undefined) {
        await releaseOrRefuse();
        return { kind: 'mfaRequired', evidence };
      }
      await secondFactor(async () => ((await this.mfa.verify({ userName: account.name, passcode })).ok ? true : FailureTypeId.SecondFactorRejected));
    }

    // Before anything changes: a success that raced the lock is refused and changes nothing.
    if (scheme.beforeSession) {
      if (!(await this.accounts.recordSuccess(account.id, reserved))) throw refused(FailureTypeId.PasswordLocked);
      // The session's id is chosen first: what runs before it (a forced password change) records it as its credential.
      const sessionId = randomUUID();
      await scheme.beforeSession(account, input, evidence, req, sessionId);
      return { kind: 'signedIn', issued: await this.complete(account, scheme.type, req, res, undefined, sessionId), account, evidence };
    }
    // Nothing runs between the success and the session: the success is the first statement of the
    // session's transaction (one commit fewer per sign-in); when it raced the lock, all of it rolls back
    // and the attempt's count is given back after.
    const raced = new SignInFailure(FailureTypeId.PasswordLocked, 'refused', userName, account);
    try {
      const issued = await this.complete(account, scheme.type, req, res, async (manager) => {
        if (!(await this.accounts.recordSuccessIn(account.id, reserved, manager))) throw raced;
      });
      return { kind: 'signedIn', issued, account, evidence };
    } catch (error) {
      if (error !== raced) throw error;
      if (reserved) await this.accounts.releaseAttempt(account.id);
      throw raced;
    }
  }

  /** The UserLogin row of a failed sign-in, whatever the scheme or the cause. */
  private async recordFailure<Input, Evidence>(scheme: SignInScheme<Input, Evidence>, failure: SignInFailure, req: Request): Promise<void> {
    await this.record(scheme.type, { createdUser: failure.createdUser, account: failure.account, failureTypeId: failure.failureTypeId, failureMessage: failure.message }, req);
  }

  /** Every UserLogin row: a success (inside the session's transaction), a refusal, a throttled attempt. */
  private async record(type: AuthenticationTypeId, row: SignInRow, req: Request, manager?: EntityManager): Promise<void> {
    await this.audit.login(
      {
        createdUser: row.account?.name ?? row.createdUser,
        userRegistryId: row.account?.id ?? null,
        tenantRegistryId: row.account?.tenantRegistryId ?? null,
        authenticationTypeId: type,
        failureTypeId: row.failureTypeId,
        // Kept by the writer for provider failures only (contract 12).
        failureMessage: row.failureMessage,
        context: requestContext(req),
      },
      manager,
    );
  }
}
