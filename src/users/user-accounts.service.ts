import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { hasControlCharacter } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SignInAccountRow, UserRegistryRepository } from './user-registry.repository';

/** A user as a sign-in needs it: the stored hash and every state a sign-in must check. */
export type SignInAccount = SignInAccountRow;

/** An attempt's place in the failure count, taken before its verify (see reserveAttempt). */
export interface ReservedAttempt {
  /** The count with this attempt included. */
  count: number;
  /** False when the account is locked or the count is past PasswordAttempts + 1: refuse without verifying. */
  mayVerify: boolean;
}

/**
 * Credential rules of user accounts: lookup for sign-in, the failure counter and lockout (each change
 * one statement in UserRegistryRepository), password changes and expiry.
 */
@Injectable()
export class UserAccounts {
  constructor(
    private readonly users: UserRegistryRepository,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly clock: Clock,
  ) {}

  /**
   * Case-insensitive match of a user name among users that are not deleted. A name with a control
   * character can never match (names are refused with them) and is not sent to PostgreSQL, which
   * rejects NUL in text.
   */
  async findByName(name: string): Promise<SignInAccount | null> {
    if (hasControlCharacter(name)) return null;
    return (await this.users.findSignInAccountByName(name)) ?? null;
  }

  async findById(id: number): Promise<SignInAccount | null> {
    return (await this.users.findSignInAccountById(id)) ?? null;
  }

  /**
   * Counts an attempt before its verify, atomically (contract 13): every concurrent attempt gets its
   * own place in the count, and the lock state is read in the same statement. The caller verifies only
   * when `mayVerify`: not locked, and the count (this attempt included) is at most PasswordAttempts + 1,
   * so however many attempts arrive at once, at most PasswordAttempts + 1 are verified between two
   * unlocks. An attempt past that place locks the account in the same statement: more attempts in
   * flight than the lockout tolerates is a burst, and the right password must not win inside it (a
   * success checks the lock last). It then gives its count back ({@link releaseAttempt}), so the count
   * keeps saying how many attempts were verified.
   */
  async reserveAttempt(id: number): Promise<ReservedAttempt> {
    const row = await this.users.countAttempt(id, this.settings.passwordAttempts + 1, this.clock.now());
    if (!row) return { count: 0, mayVerify: false };
    return { count: row.count, mayVerify: !row.locked && row.count <= this.settings.passwordAttempts + 1 };
  }

  /** The same statement shape for an attempt with no account, so both paths do the same work. */
  async countNoAttempt(): Promise<void> {
    await this.reserveAttempt(-1);
  }

  /** Gives back the count of an attempt that was refused without a verify. */
  async releaseAttempt(id: number): Promise<void> {
    await this.users.uncountAttempt(id);
  }

  /**
   * Takes back the count of an attempt whose password was right but that does not finish here (a
   * second factor or a new password is still needed). Answers whether the account is clear: not
   * locked, and no other attempt has pushed the count past the lock threshold meanwhile
   * ({@link isClear}). When it is not, the caller refuses (FailureTypeId 3) rather than tell the caller
   * the password was right while the account is being locked.
   */
  async releaseRightAttempt(id: number, attempt: ReservedAttempt): Promise<boolean> {
    const row = await this.users.uncountAttempt(id);
    // The count before this release (this attempt's own place included).
    return row !== null && !row.locked && row.count + 1 <= this.clearBound(attempt);
  }

  isLocked(id: number): Promise<boolean> {
    return this.users.isLocked(id);
  }

  /** Locks the account when the failures counted so far exceed PasswordAttempts; true if it did. */
  async lockIfExceeded(id: number, failures: number): Promise<boolean> {
    if (failures <= this.settings.passwordAttempts) return false;
    await this.users.lock(id, this.clock.now());
    return true;
  }

  /**
   * A successful sign-in, in one conditional UPDATE: the count is reset and LastLoginDate written only
   * while the account is clear. For a counted attempt (password, passcode) clear means not locked and
   * no other attempt holding a place past the lock threshold: a success racing the lock is refused
   * (false), and its own count given back. For schemes that count nothing (OpenID Connect, Negotiate
   * without a second factor) clear means not locked.
   */
  async recordSuccess(id: number, attempt: ReservedAttempt | null = null): Promise<boolean> {
    if (await this.users.recordSuccess(id, this.clock.now(), attempt ? this.clearBound(attempt) : null)) return true;
    if (attempt) await this.releaseAttempt(id);
    return false;
  }

  /**
   * The same success as {@link recordSuccess} as the first statement of the caller's transaction (the
   * session's: one commit fewer). On false the caller rolls back and then gives the attempt's count back
   * ({@link releaseAttempt}): a release inside the rolled-back transaction would be undone with it.
   */
  recordSuccessIn(id: number, attempt: ReservedAttempt | null, tx: EntityManager): Promise<boolean> {
    return this.users.recordSuccess(id, this.clock.now(), attempt ? this.clearBound(attempt) : null, tx);
  }

  /**
   * The highest count at which an attempt that verified right still wins: PasswordAttempts while it
   * holds an earlier place (so an attempt holding the last place, PasswordAttempts + 1, may still be a
   * wrong one about to lock), or its own place when it holds the last one itself. A higher count means
   * some other attempt reached the lock threshold: the lock is reached, the success is refused.
   */
  private clearBound(attempt: ReservedAttempt): number {
    return Math.max(attempt.count, this.settings.passwordAttempts);
  }

  /**
   * Stores a new password hash. `mustChange` leaves it already expired so the next sign-in must set
   * another; otherwise it expires after PasswordExpiryDays.
   */
  async setPassword(
    id: number,
    hash: string,
    options: { wirePasswordHash?: boolean; mustChange?: boolean; manager?: EntityManager } = {},
  ): Promise<void> {
    const now = this.clock.now();
    await this.users.setPassword(id, { hash, createdDate: now, expiryDate: this.expiryOf(now, options.mustChange), wirePasswordHash: options.wirePasswordHash }, options.manager);
  }

  /** The password members of a new user (UserRegistry's properties), as setPassword would write them. */
  newPassword(hash: string, options: { wirePasswordHash: boolean; mustChange: boolean }) {
    const now = this.clock.now();
    return { password: hash, passwordCreatedDate: now, passwordExpiryDate: this.expiryOf(now, options.mustChange), wirePasswordHash: options.wirePasswordHash };
  }

  /** A password set `now` expires at once when it must be changed, else after the configured days. */
  private expiryOf(now: Date, mustChange: boolean | undefined): Date {
    return mustChange ? now : new Date(now.getTime() + this.settings.passwordExpiryDays * 86_400_000);
  }

  isPasswordExpired(account: SignInAccount): boolean {
    return !account.passwordHash || !account.passwordExpiryDate || account.passwordExpiryDate.getTime() <= this.clock.nowMs();
  }
}
