import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { LessThanOrEqual, Repository } from 'typeorm';
import { ChallengePurpose, PasskeyChallenge } from './passkey-challenge.entity';

/** A challenge to keep: what it is, for what, for whom, until when. */
export interface NewChallenge {
  id: string;
  purpose: ChallengePurpose;
  challenge: Buffer;
  userRegistryId: number | null;
  remoteIp: string | null;
  expiresDate: Date;
}

/** A challenge row as its DELETE … RETURNING answers it. */
export interface TakenChallenge {
  challenge: Buffer;
  expires: Date;
  purpose: number;
  owner: number | null;
}

/**
 * What a taken challenge is worth: its bytes while it has not expired and it was issued for `purpose`
 * (and, for a second factor, to that user); null otherwise. One rule for every statement that takes one.
 */
export function acceptChallenge(row: TakenChallenge | null | undefined, purpose: ChallengePurpose, userRegistryId: number | null, now: Date): Buffer | null {
  if (!row || row.purpose !== purpose || row.expires.getTime() <= now.getTime()) return null;
  if (userRegistryId !== null && row.owner !== userRegistryId) return null;
  return row.challenge;
}

/**
 * The statement clause that makes its implicit transaction commit without waiting for the WAL flush
 * (`set_config(…, true)` is SET LOCAL inside the statement): for statements whose loss in a crash
 * harms nothing. A challenge lost is asked for again; a consumed challenge is made durable by the
 * sign-in's own UserLogin row, committed synchronously before any answer (the WAL is flushed in
 * order, so that flush carries the DELETE before it). Saves a WAL flush (~6 ms here, bench/RESULTS.md).
 */
export const NO_FLUSH_WAIT = `set_config('synchronous_commit', 'off', true) IS NOT NULL`;

/** Live challenges one address may hold, and the whole table: a flood of Options calls stays bounded. */
export interface ChallengeBounds {
  perAddress: number;
  total: number;
}

/**
 * Every statement on PasskeyChallenge. Raw SQL where one statement must decide and act: `issue`
 * stores only while the bounds hold (INSERT ... SELECT ... WHERE, which TypeORM's insert cannot say),
 * and a registration's row (Id = the session) replaces the session's earlier one; `consume` deletes
 * and returns in one statement, so a challenge is accepted once however many nodes race for it.
 */
@Injectable()
export class PasskeyChallengeRepository {
  constructor(@InjectRepository(PasskeyChallenge) private readonly repository: Repository<PasskeyChallenge>) {}

  /** Stores the challenge unless a bound is reached (false then). */
  async issue(row: NewChallenge, now: Date, bounds: ChallengeBounds): Promise<boolean> {
    const stored: unknown[] = await this.repository.query(
      `INSERT INTO "PasskeyChallenge" ("Id", "Purpose", "Challenge", "UserRegistryId", "RemoteIp", "ExpiresDate")
       SELECT $1::uuid, $2::smallint, $3::bytea, $4::integer, $5::varchar, $6::timestamptz
        WHERE ${NO_FLUSH_WAIT}
          AND (SELECT count(*) FROM "PasskeyChallenge" WHERE "RemoteIp" IS NOT DISTINCT FROM $5::varchar AND "ExpiresDate" > $7::timestamptz) < $8::integer
          AND (SELECT count(*) FROM "PasskeyChallenge" WHERE "ExpiresDate" > $7::timestamptz) < $9::integer
       ON CONFLICT ("Id") DO UPDATE SET
         "Purpose" = EXCLUDED."Purpose", "Challenge" = EXCLUDED."Challenge", "UserRegistryId" = EXCLUDED."UserRegistryId",
         "RemoteIp" = EXCLUDED."RemoteIp", "ExpiresDate" = EXCLUDED."ExpiresDate"
       RETURNING "Id"`,
      [row.id, row.purpose, row.challenge, row.userRegistryId, row.remoteIp, row.expiresDate, now, bounds.perAddress, bounds.total],
    );
    return stored.length === 1;
  }

  /**
   * Takes the challenge `id` issued for `purpose` (and, for a second factor, to that user): deleted
   * whatever happens next, returned only while it has not expired. Null: unknown, used, expired,
   * another purpose or another user's.
   */
  async consume(id: string, purpose: ChallengePurpose, userRegistryId: number | null, now: Date): Promise<Buffer | null> {
    // For DELETE, TypeORM's query() answers [rows, affected count].
    const [rows]: [TakenChallenge[], number] = await this.repository.query(
      `DELETE FROM "PasskeyChallenge" WHERE "Id" = $1
       RETURNING "Challenge" AS challenge, "ExpiresDate" AS expires, "Purpose" AS purpose, "UserRegistryId" AS owner`,
      [id],
    );
    return acceptChallenge(rows[0], purpose, userRegistryId, now);
  }

  /** Forgets expired challenges (once a minute). */
  async purgeExpired(now: Date): Promise<void> {
    await this.repository.delete({ expiresDate: LessThanOrEqual(now) });
  }
}
