import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationTypeId, FailureTypeId, LogoutReasonId } from '../audit/audit.types';
import { AuditWriter } from '../audit/audit.writer';
import { IssuedToken } from '../auth/token.service';
import { FieldProblem, ProblemError, badRequest, unauthorized } from '../common/problem';
import { requestContext } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { MfaProvider } from '../mfa/mfa.provider';
import { SessionRevocation } from '../sessions/session-revocation.service';
import { PasswordHasher } from '../users/password-hasher.service';
import { passwordRuleProblems, wireHashProblems } from '../users/password-rules';
import { SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { ChangePasswordDto, PasswordSignInDto } from './login.dto';
import { PasswordTransport } from '../users/password-transport';
import { SignInCompletion } from './sign-in.service';
import { SignInThrottle } from './sign-in-throttle.service';

/** The one answer for every failed sign-in, whatever the cause (contract 3). */
export const SIGN_IN_FAILED = 'The user name, password or passcode is not valid.';

export type PasswordSignInResult = { kind: 'signedIn'; issued: IssuedToken } | { kind: 'mfaRequired' };

/** The clear values of the password fields, after transport decryption; null where absent. */
interface OpenedPasswords {
  password: string | null;
  passwordUnreadable: boolean;
  newPassword: string | null;
  repeatNewPassword: string | null;
}

/**
 * Username and password sign-in (contract 3). Every failure answers the same 401 after the same work
 * (an Argon2 verify, real or dummy), and writes its UserLogin row before answering.
 */
@Injectable()
export class PasswordSignIn {
  private readonly logger = new Logger('PasswordSignIn');

  constructor(
    private readonly accounts: UserAccounts,
    private readonly hasher: PasswordHasher,
    private readonly audit: AuditWriter,
    private readonly transport: PasswordTransport,
    private readonly completion: SignInCompletion,
    private readonly revocation: SessionRevocation,
    private readonly mfa: MfaProvider,
    private readonly throttle: SignInThrottle,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  async signIn(dto: PasswordSignInDto, req: Request, res: Response): Promise<PasswordSignInResult> {
    // Before anything is looked up or verified: an address past SignInThrottle gets 429 (contract 13).
    const ticket = await this.throttle.enter(req, AuthenticationTypeId.UserNamePassword, dto.userName);
    const context = requestContext(req);
    const opened = this.openPasswords(dto);
    const attempt = opened.password ?? '';
    const fail = async (failureTypeId: FailureTypeId, account: SignInAccount | null): Promise<never> => {
      await this.audit.login({
        createdUser: account?.name ?? dto.userName,
        userRegistryId: account?.id ?? null,
        tenantRegistryId: account?.tenantRegistryId ?? null,
        authenticationTypeId: AuthenticationTypeId.UserNamePassword,
        failureTypeId,
        context,
      });
      throw unauthorized(SIGN_IN_FAILED);
    };

    const account = await this.accounts.findByName(dto.userName);
    // Failures decided before any verify count nothing and cost one dummy verify, like the rest.
    const refuseEarly = async (failureTypeId: FailureTypeId): Promise<never> => {
      await this.accounts.countNoAttempt();
      await this.hasher.dummyVerify(attempt);
      return fail(failureTypeId, account);
    };
    if (!account) return refuseEarly(FailureTypeId.NoUser);
    if (!account.active) return refuseEarly(FailureTypeId.NotActive);
    if (account.passwordLocked) return refuseEarly(FailureTypeId.PasswordLocked);
    if (attempt === '' && !opened.passwordUnreadable) return refuseEarly(FailureTypeId.NoPassword);

    // Counted before the verify, with the lock read in the same statement (contract 13): an attempt
    // past the threshold, or on an account locked meanwhile, is refused without verifying.
    const reserved = await this.accounts.reserveAttempt(account.id);
    if (!reserved.mayVerify) {
      await this.accounts.releaseAttempt(account.id);
      await this.hasher.dummyVerify(attempt);
      return fail(FailureTypeId.PasswordLocked, account);
    }
    const verified = opened.passwordUnreadable
      ? (await this.hasher.dummyVerify(attempt), false)
      : await this.hasher.verify(account.passwordHash, attempt);
    if (!verified) {
      await this.accounts.lockIfExceeded(account.id, reserved.count);
      return fail(FailureTypeId.PasswordMismatch, account);
    }

    // The password is right from here on: a step that stops the sign-in takes back its count, unless
    // the lock was reached meanwhile (then the answer must not tell that the password was right).
    const releaseOrRefuse = async (): Promise<void> => {
      if (!(await this.accounts.releaseRightAttempt(account.id, reserved))) await fail(FailureTypeId.PasswordLocked, account);
    };
    if (this.accounts.isPasswordExpired(account) && dto.newPassword === undefined) {
      await releaseOrRefuse();
      await this.recordFailure(account, FailureTypeId.PasswordExpired, context);
      throw new ProblemError(403, 'Forbidden', 'The password has expired and must be changed.', {
        code: 'PasswordChangeRequired',
      });
    }
    let newPassword: string | null = null;
    if (dto.newPassword !== undefined) {
      const problems = this.newPasswordProblems(account.wirePasswordHash, attempt, opened, dto.repeatNewPassword !== undefined);
      if (problems.length > 0) {
        await releaseOrRefuse();
        await this.recordFailure(account, FailureTypeId.PasswordExpired, context);
        throw badRequest('The new password is not acceptable.', problems);
      }
      newPassword = opened.newPassword;
    }

    if (this.settings.enableMultifactorAuthentication) {
      if (!dto.mfa) {
        await releaseOrRefuse();
        await ticket.release();
        return { kind: 'mfaRequired' };
      }
      // The passcode is verified under the password attempt's place in the count: a burst of passcodes
      // is bounded exactly like a burst of passwords. A lock set while the password was hashed stops it
      // before the provider is asked.
      if (await this.accounts.isLocked(account.id)) {
        await this.accounts.releaseAttempt(account.id);
        return fail(FailureTypeId.PasswordLocked, account);
      }
      const { ok } = await this.mfa.verify({ userName: account.name, passcode: dto.mfa });
      if (!ok) {
        // A rejected passcode counts toward the lockout (contract 7): the attempt keeps its count.
        await this.accounts.lockIfExceeded(account.id, reserved.count);
        return fail(FailureTypeId.SecondFactorRejected, account);
      }
    }

    // Before anything changes: a success that raced the lock is refused and changes nothing.
    if (!(await this.accounts.recordSuccess(account.id, reserved))) return fail(FailureTypeId.PasswordLocked, account);
    if (newPassword !== null) await this.changePassword(account, newPassword, context);
    const issued = await this.completion.complete(account, AuthenticationTypeId.UserNamePassword, req, res, { alreadyRecorded: true });
    await ticket.release();
    return { kind: 'signedIn', issued: issued! };
  }

  /**
   * ChangePassword for a signed-in caller: the current password must verify (a wrong one counts
   * toward the lockout); every earlier session ends and the caller gets a new one.
   */
  async changeOwnPassword(userRegistryId: number, dto: ChangePasswordDto, req: Request, res: Response): Promise<IssuedToken> {
    const context = requestContext(req);
    const account = await this.accounts.findById(userRegistryId);
    if (!account || !account.active || account.passwordLocked) throw unauthorized();
    const opened = this.openPasswords(dto);
    // The same bounded count as a sign-in (contract 13): a burst of guesses verifies at most
    // PasswordAttempts + 1 of them, and the one that reaches the lock locks the account.
    const reserved = await this.accounts.reserveAttempt(account.id);
    if (!reserved.mayVerify) {
      await this.accounts.releaseAttempt(account.id);
      await this.hasher.dummyVerify(opened.password ?? '');
      throw unauthorized();
    }
    const verified = !opened.passwordUnreadable && (await this.hasher.verify(account.passwordHash, opened.password ?? ''));
    if (!verified) {
      await this.accounts.lockIfExceeded(account.id, reserved.count);
      throw badRequest('The password was not changed.', [{ field: 'password', message: 'is not the current password' }]);
    }
    if (!(await this.accounts.releaseRightAttempt(account.id, reserved))) throw unauthorized();
    const problems = this.newPasswordProblems(account.wirePasswordHash, opened.password!, opened, true);
    if (problems.length > 0) throw badRequest('The new password is not acceptable.', problems);
    if (!(await this.accounts.recordSuccess(account.id))) throw unauthorized();
    await this.changePassword(account, opened.newPassword!, context);
    const issued = await this.completion.complete(account, AuthenticationTypeId.UserNamePassword, req, res, { alreadyRecorded: true });
    return issued!;
  }

  private async changePassword(account: SignInAccount, newPassword: string, context: ReturnType<typeof requestContext>) {
    await this.accounts.setPassword(account.id, await this.hasher.hash(newPassword));
    await this.revocation.revokeAll(
      { userRegistryId: account.id, userName: account.name, tenantRegistryId: account.tenantRegistryId },
      { reasonId: LogoutReasonId.PasswordChanged, context },
    );
    this.logger.log(`password changed for user ${account.id}`);
  }

  private async recordFailure(account: SignInAccount, failureTypeId: FailureTypeId, context: ReturnType<typeof requestContext>) {
    await this.audit.login({
      createdUser: account.name,
      userRegistryId: account.id,
      tenantRegistryId: account.tenantRegistryId,
      authenticationTypeId: AuthenticationTypeId.UserNamePassword,
      failureTypeId,
      context,
    });
  }

  private openPasswords(dto: { password?: string; newPassword?: string; repeatNewPassword?: string }): OpenedPasswords {
    const password = this.transport.open(dto.password);
    return {
      password,
      passwordUnreadable: dto.password !== undefined && dto.password !== '' && password === null,
      newPassword: this.transport.open(dto.newPassword),
      repeatNewPassword: this.transport.open(dto.repeatNewPassword),
    };
  }

  /** Every rule a new password breaks; strength rules are skipped for wire-hash users (the server sees a hash). */
  private newPasswordProblems(wireHash: boolean, current: string, opened: OpenedPasswords, repeatGiven: boolean): FieldProblem[] {
    const next = opened.newPassword;
    if (next === null || next === '') return [{ field: 'newPassword', message: 'must be given and readable' }];
    const problems = wireHash ? [] : passwordRuleProblems(next);
    if (wireHash) problems.push(...wireHashProblems(next, 'newPassword'));
    if (repeatGiven && opened.repeatNewPassword !== next) {
      problems.push({ field: 'repeatNewPassword', message: 'must equal newPassword' });
    }
    if (next === current) problems.push({ field: 'newPassword', message: 'must differ from the current password' });
    return problems;
  }
}
