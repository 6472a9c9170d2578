import { Injectable } from '@nestjs/common';
import { ReservedAttempt, UserAccounts } from '../users/user-accounts.service';

/**
 * What a secret checked under the lockout count turned out to be; a mismatch may carry the refusal of
 * the secret's own (a passkey refused by policy) instead of a plain wrong secret.
 */
export type GuardedVerdict<Refusal = never> =
  | { verdict: 'locked' }
  | { verdict: 'mismatch'; failure?: Refusal }
  | { verdict: 'right'; reserved: ReservedAttempt };

/** A secret of one account: its check, and the same work without an answer (so a refusal costs what a check costs). */
export interface GuardedSecret<Refusal = never> {
  /** True when right; false, or a refusal of the secret's own, when not. */
  verify(): Promise<boolean | Refusal>;
  imitate(): Promise<void>;
}

/**
 * The lockout-guarded verification (contract 13, docs/decisions/0012): a place in the account's
 * failure count is reserved, with the lock read in the same statement, before the secret is checked;
 * past the threshold, or on a locked account, the secret is refused unchecked (after the same work);
 * a wrong secret keeps its place and locks the account when it reaches the threshold. A burst of
 * guesses sent at once therefore verifies at most PasswordAttempts + 1 of them. The one sequence for
 * a sign-in's proof, a second factor that is the only secret, and ChangePassword's current password;
 * what a right secret's place becomes is the caller's (given back, or cleared with the success).
 */
@Injectable()
export class LockoutGuard {
  constructor(private readonly accounts: UserAccounts) {}

  async verify<Refusal = never>(accountId: number, secret: GuardedSecret<Refusal>): Promise<GuardedVerdict<Refusal>> {
    const reserved = await this.accounts.reserveAttempt(accountId);
    if (!reserved.mayVerify) {
      await this.accounts.releaseAttempt(accountId);
      await secret.imitate();
      return { verdict: 'locked' };
    }
    const verdict = await secret.verify();
    if (verdict !== true) {
      await this.accounts.lockIfExceeded(accountId, reserved.count);
      return verdict === false ? { verdict: 'mismatch' } : { verdict: 'mismatch', failure: verdict };
    }
    return { verdict: 'right', reserved };
  }
}
