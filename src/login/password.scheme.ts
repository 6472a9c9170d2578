import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { AuthenticationTypeId, FailureTypeId } from '../sign-in-trail/audit.types';
import { ProblemError, badRequest, unauthorized } from '../common/problem';
import { PasswordHasher } from '../users/password-hasher.service';
import { SignInAccount, UserAccounts } from '../users/user-accounts.service';
import { PasskeyAssertionDto } from '../passkeys/passkeys.dto';
import { PasswordSignInDto } from './login.dto';
import { OpenedPasswords, PasswordChange } from './password-change.service';
import { Identified, SIGN_IN_FAILED, SignInFailure, SignInProof, SignInScheme } from './sign-in-scheme';

/**
 * Username and password (contract 3): the name is a claim, the password its proof, verified by the
 * flow under the lockout count. Every failure answers the same 401 after the same work (an Argon2
 * verify, real or dummy). An expired password is changed in the same request (403 asks for it).
 */
@Injectable()
export class PasswordScheme implements SignInScheme<PasswordSignInDto, OpenedPasswords> {
  readonly type = AuthenticationTypeId.UserNamePassword;
  readonly proof: SignInProof<OpenedPasswords>;

  constructor(
    private readonly accounts: UserAccounts,
    hasher: PasswordHasher,
    private readonly passwords: PasswordChange,
  ) {
    this.proof = {
      mismatch: FailureTypeId.PasswordMismatch,
      missing: (opened) => (opened.password ?? '') === '' && !opened.passwordUnreadable,
      // An unreadable ciphertext costs a dummy verify and fails, like a wrong password.
      verify: async (account, opened) =>
        opened.passwordUnreadable ? (await hasher.dummyVerify(opened.password ?? ''), false) : hasher.verify(account.passwordHash, opened.password ?? ''),
      imitate: (opened) => hasher.dummyVerify(opened.password ?? ''),
    };
  }

  claimedName(dto: PasswordSignInDto): string {
    return dto.userName;
  }

  async identify(dto: PasswordSignInDto): Promise<Identified<OpenedPasswords>> {
    return { userName: dto.userName, evidence: this.passwords.open(dto) };
  }

  afterProof(account: SignInAccount, _dto: PasswordSignInDto, opened: OpenedPasswords): { failureTypeId: FailureTypeId; answer: Error } | null {
    if (this.accounts.isPasswordExpired(account) && !opened.newPasswordGiven) {
      return {
        failureTypeId: FailureTypeId.PasswordExpired,
        answer: new ProblemError(403, 'Forbidden', 'The password has expired and must be changed.', { code: 'PasswordChangeRequired' }),
      };
    }
    if (opened.newPasswordGiven) {
      const problems = this.passwords.problems(account.wirePasswordHash, opened.password ?? '', opened);
      if (problems.length > 0) return { failureTypeId: FailureTypeId.PasswordExpired, answer: badRequest('The new password is not acceptable.', problems) };
    }
    return null;
  }

  passcode(dto: PasswordSignInDto): string | undefined {
    return dto.mfa || undefined;
  }

  passkey(dto: PasswordSignInDto): PasskeyAssertionDto | undefined {
    return dto.passkey;
  }

  async beforeSession(account: SignInAccount, _dto: PasswordSignInDto, opened: OpenedPasswords, req: Request, sessionId: string): Promise<void> {
    if (opened.newPasswordGiven) await this.passwords.apply(account, opened.newPassword!, req, { signInSessionId: sessionId });
  }

  refusal(_failure: SignInFailure): Error {
    return unauthorized(SIGN_IN_FAILED);
  }
}
