import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AuthenticationTypeId, LogoutReasonId } from '../audit/audit.types';
import { IssuedToken } from '../guard/token.service';
import { FieldProblem, badRequest, unauthorized } from '../common/problem';
import { requestContext } from '../common/request-context';
import { SessionRevocation } from '../session-store/session-revocation.service';
import { PasswordHasher } from '../users/password-hasher.service';
import { passwordRuleProblems, wireHashProblems } from '../users/password-rules';
import { PasswordTransport } from '../users/password-transport';
import { SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { ChangePasswordDto } from './login.dto';
import { LockoutGuard } from './lockout-guard';
import { SignInFlow } from './sign-in-flow.service';

/** The clear values of the password fields, after transport decryption; null where absent. */
export interface OpenedPasswords {
  password: string | null;
  passwordUnreadable: boolean;
  newPassword: string | null;
  repeatNewPassword: string | null;
  /** Whether the caller sent newPassword at all (a change at sign-in was asked for). */
  newPasswordGiven: boolean;
  repeatGiven: boolean;
}

/**
 * Password fields and password changes: opening the transport encryption, the new-password rules, the
 * change itself (every earlier session ends), and ChangePassword for a signed-in caller. Shared by the
 * password sign-in scheme (a change at sign-in) and the ChangePassword route.
 */
@Injectable()
export class PasswordChange {
  private readonly logger = new Logger('PasswordSignIn');

  constructor(
    private readonly accounts: UserAccounts,
    private readonly hasher: PasswordHasher,
    private readonly transport: PasswordTransport,
    private readonly lockout: LockoutGuard,
    private readonly flow: SignInFlow,
    private readonly revocation: SessionRevocation,
  ) {}

  /**
   * ChangePassword for a signed-in caller: the current password must verify under the lockout count
   * (LockoutGuard, as a sign-in's password; a wrong one counts); every earlier session ends and the
   * caller gets a new one, started by SignInFlow as a sign-in's (its UserLogin row too).
   */
  async changeOwnPassword(userRegistryId: number, dto: ChangePasswordDto, req: Request, res: Response): Promise<IssuedToken> {
    const account = await this.accounts.findById(userRegistryId);
    if (!account || !account.active || account.passwordLocked) throw unauthorized();
    const opened = this.open(dto);
    // The same bounded count as a sign-in (contract 13): a burst of guesses verifies at most
    // PasswordAttempts + 1 of them, and the one that reaches the lock locks the account.
    const checked = await this.lockout.verify(account.id, {
      verify: async () => !opened.passwordUnreadable && (await this.hasher.verify(account.passwordHash, opened.password ?? '')),
      imitate: () => this.hasher.dummyVerify(opened.password ?? ''),
    });
    if (checked.verdict === 'locked') throw unauthorized();
    if (checked.verdict === 'mismatch') throw badRequest('The password was not changed.', [{ field: 'password', message: 'is not the current password' }]);
    if (!(await this.accounts.releaseRightAttempt(account.id, checked.reserved))) throw unauthorized();
    const problems = this.problems(account.wirePasswordHash, opened.password!, { ...opened, repeatGiven: true });
    if (problems.length > 0) throw badRequest('The new password is not acceptable.', problems);
    if (!(await this.accounts.recordSuccess(account.id))) throw unauthorized();
    await this.apply(account, opened.newPassword!, req);
    return this.flow.complete(account, AuthenticationTypeId.UserNamePassword, req, res);
  }

  /** Sets the new password and ends every earlier session of the account. */
  async apply(account: SignInAccount, newPassword: string, req: Request): Promise<void> {
    await this.accounts.setPassword(account.id, await this.hasher.hash(newPassword));
    await this.revocation.revokeAll(
      { userRegistryId: account.id, userName: account.name, tenantRegistryId: account.tenantRegistryId },
      { reasonId: LogoutReasonId.PasswordChanged, context: requestContext(req) },
    );
    this.logger.log(`password changed for user ${account.id}`);
  }

  open(dto: { password?: string; newPassword?: string; repeatNewPassword?: string }): OpenedPasswords {
    const password = this.transport.open(dto.password);
    return {
      password,
      passwordUnreadable: dto.password !== undefined && dto.password !== '' && password === null,
      newPassword: this.transport.open(dto.newPassword),
      repeatNewPassword: this.transport.open(dto.repeatNewPassword),
      newPasswordGiven: dto.newPassword !== undefined,
      repeatGiven: dto.repeatNewPassword !== undefined,
    };
  }

  /** Every rule a new password breaks; strength rules are skipped for wire-hash users (the server sees a hash). */
  problems(wireHash: boolean, current: string, opened: OpenedPasswords): FieldProblem[] {
    const next = opened.newPassword;
    if (next === null || next === '') return [{ field: 'newPassword', message: 'must be given and readable' }];
    const problems = wireHash ? [] : passwordRuleProblems(next);
    if (wireHash) problems.push(...wireHashProblems(next, 'newPassword'));
    if (opened.repeatGiven && opened.repeatNewPassword !== next) {
      problems.push({ field: 'repeatNewPassword', message: 'must equal newPassword' });
    }
    if (next === current) problems.push({ field: 'newPassword', message: 'must differ from the current password' });
    return problems;
  }
}
