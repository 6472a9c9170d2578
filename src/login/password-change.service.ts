import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { adminActor, AdminChangeRecorder, RecordedActor } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { AuthenticationTypeId, LogoutReasonId } from '../sign-in-trail/audit.types';
import { IssuedToken } from '../guard/token.service';
import type { Principal } from '../access/principal';
import { Transactions } from '../database/transactions';
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
    private readonly transactions: Transactions,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  /**
   * ChangePassword for a signed-in caller: the current password must verify under the lockout count
   * (LockoutGuard, as a sign-in's password; a wrong one counts); every earlier session ends and the
   * caller gets a new one, started by SignInFlow as a sign-in's (its UserLogin row too).
   */
  async changeOwnPassword(principal: Principal, dto: ChangePasswordDto, req: Request, res: Response): Promise<IssuedToken> {
    const account = await this.accounts.findById(principal.userRegistryId);
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
    await this.apply(account, opened.newPassword!, req, { actor: adminActor(principal, req) });
    return this.flow.complete(account, AuthenticationTypeId.UserNamePassword, req, res);
  }

  /**
   * Sets the new password, with its AdminChange PasswordChanged in the same transaction (contract 18),
   * and ends every earlier session of the account. `by.actor`: the signed-in caller of ChangePassword; at
   * a sign-in's forced change (`by.signInSessionId`), the user signing in, credited with the session the
   * sign-in opens right after the change (CredentialTypeId 3, CredentialId that session's sid: every
   * sign-in sets its cookies, whatever else it answers).
   */
  async apply(account: SignInAccount, newPassword: string, req: Request, by: { actor: RecordedActor } | { signInSessionId: string }): Promise<void> {
    const hash = await this.hasher.hash(newPassword);
    const actor: RecordedActor =
      'actor' in by
        ? by.actor
        : {
            principal: { userRegistryId: account.id, userName: account.name, tenantRegistryId: account.tenantRegistryId, authenticationType: 'Cookie', sessionId: by.signInSessionId, apiKeyDisplay: null },
            context: requestContext(req),
          };
    await this.transactions.runChange(async (tx) => {
      await this.accounts.setPassword(account.id, hash, { manager: tx });
      await this.adminChanges.record(tx, actor, {
        actionType: ActionTypeId.PasswordChanged,
        targetTable: 'UserRegistry',
        targetId: account.id,
        targetName: account.name,
        targetTenantRegistryId: account.tenantRegistryId,
        changes: changesText({ password: account.passwordHash }, { password: hash }, { secrets: ['password'], alwaysChanged: ['password'] }),
      });
    });
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
