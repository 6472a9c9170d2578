import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { hasControlCharacter } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';

/** A user as a sign-in needs it: the stored hash and every state a sign-in must check. */
export interface SignInAccount {
  id: number;
  name: string;
  passwordHash: string | null;
  active: boolean;
  passwordLocked: boolean;
  passwordExpiryDate: Date | null;
  wirePasswordHash: boolean;
  tenantRegistryId: number;
}

const ACCOUNT_COLUMNS = `
  u."Id" AS id, u."Name" AS name, u."Password" AS "passwordHash",
  (u."Active" AND t."Active") AS active, u."PasswordLocked" AS "passwordLocked",
  u."PasswordExpiryDate" AS "passwordExpiryDate", u."WirePasswordHash" AS "wirePasswordHash",
  r."TenantRegistryId" AS "tenantRegistryId"`;
const ACCOUNT_FROM = `
  FROM "UserRegistry" u
  JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId"
  JOIN "TenantRegistry" t ON t."Id" = r."TenantRegistryId"`;

/**
 * Credential state of user accounts: lookup for sign-in, the atomic failure counter and lockout,
 * password changes. Every statement is parameterised.
 */
@Injectable()
export class UserAccounts {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const rows: SignInAccount[] = await this.dataSource.query(
      `SELECT ${ACCOUNT_COLUMNS} ${ACCOUNT_FROM} WHERE lower(u."Name") = lower($1) AND NOT u."Deleted"`,
      [name],
    );
    return rows[0] ?? null;
  }

  async findById(id: number): Promise<SignInAccount | null> {
    const rows: SignInAccount[] = await this.dataSource.query(
      `SELECT ${ACCOUNT_COLUMNS} ${ACCOUNT_FROM} WHERE u."Id" = $1 AND NOT u."Deleted"`,
      [id],
    );
    return rows[0] ?? null;
  }

  /** Counts an attempt before its verify, atomically, so concurrent wrong passwords each count. */
  async countAttempt(id: number): Promise<number> {
    // Wrapped in a CTE so TypeORM returns the rows (it returns [rows, count] for a bare UPDATE).
    const rows: { count: number }[] = await this.dataSource.query(
      `WITH counted AS (UPDATE "UserRegistry" SET "FailedPasswordCount" = "FailedPasswordCount" + 1 WHERE "Id" = $1
                        RETURNING "FailedPasswordCount")
       SELECT "FailedPasswordCount" AS count FROM counted`,
      [id],
    );
    return rows[0]?.count ?? 0;
  }

  /** The same statement shape for an attempt with no account, so both paths do the same work. */
  async countNoAttempt(): Promise<void> {
    await this.dataSource.query(
      `WITH counted AS (UPDATE "UserRegistry" SET "FailedPasswordCount" = "FailedPasswordCount" + 1 WHERE "Id" = $1
                        RETURNING "FailedPasswordCount")
       SELECT "FailedPasswordCount" AS count FROM counted`,
      [-1],
    );
  }

  /** Takes back the count of an attempt whose password was right but that did not finish. */
  async uncountAttempt(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "UserRegistry" SET "FailedPasswordCount" = GREATEST("FailedPasswordCount" - 1, 0) WHERE "Id" = $1`,
      [id],
    );
  }

  /** Locks the account when the failures counted so far exceed PasswordAttempts; true if it did. */
  async lockIfExceeded(id: number, failures: number): Promise<boolean> {
    if (failures <= this.settings.passwordAttempts) return false;
    await this.dataSource.query(
      `UPDATE "UserRegistry" SET "PasswordLocked" = true, "PasswordLockedDate" = $2 WHERE "Id" = $1 AND NOT "PasswordLocked"`,
      [id, this.clock.now()],
    );
    return true;
  }

  async recordSuccess(id: number): Promise<void> {
    await this.dataSource.query(
      `UPDATE "UserRegistry" SET "FailedPasswordCount" = 0, "LastLoginDate" = $2 WHERE "Id" = $1`,
      [id, this.clock.now()],
    );
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
    const expiry = options.mustChange ? now : new Date(now.getTime() + this.settings.passwordExpiryDays * 86_400_000);
    await (options.manager ?? this.dataSource.manager).query(
      `UPDATE "UserRegistry"
          SET "Password" = $2, "PasswordCreatedDate" = $3, "PasswordExpiryDate" = $4,
              "WirePasswordHash" = COALESCE($5, "WirePasswordHash")
        WHERE "Id" = $1`,
      [id, hash, now, expiry, options.wirePasswordHash ?? null],
    );
  }

  isPasswordExpired(account: SignInAccount): boolean {
    return !account.passwordHash || !account.passwordExpiryDate || account.passwordExpiryDate.getTime() <= this.clock.nowMs();
  }
}
