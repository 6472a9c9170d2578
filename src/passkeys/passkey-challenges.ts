import { Injectable } from '@nestjs/common';
import { randomBytes, randomUUID } from 'node:crypto';
import { Clock } from '../common/clock';
import { ProblemError } from '../common/problem';
import { ChallengePurpose } from './passkey-challenge.entity';
import { acceptChallenge, ChallengeBounds, PasskeyChallengeRepository, TakenChallenge } from './passkey-challenge.repository';

/** A challenge is valid this long (contract 20). */
export const CHALLENGE_LIFETIME_MS = 2 * 60_000;
/** Live challenges per client address and in all; past them Options answers 429 until some expire. */
export const CHALLENGE_BOUNDS: ChallengeBounds = { perAddress: 500, total: 20_000 };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An issued challenge: its id (the session's, for a registration) and its 32 bytes. */
export interface IssuedChallenge {
  id: string;
  challenge: Buffer;
}

/**
 * WebAuthn challenges (contract 20): 32 random bytes, single use, bound to what asked for them (the
 * session for a registration, the challenge id for a sign-in, and the user too for a second factor),
 * valid 2 minutes on the service's Clock, in the database every node shares.
 */
@Injectable()
export class PasskeyChallenges {
  constructor(
    private readonly challenges: PasskeyChallengeRepository,
    private readonly clock: Clock,
  ) {}

  /** A new challenge; `id` given for a registration (the session's id), random otherwise. */
  async issue(purpose: ChallengePurpose, remoteIp: string | null, bound: { id?: string; userRegistryId?: number } = {}): Promise<IssuedChallenge> {
    const now = this.clock.now();
    const issued = { id: bound.id ?? randomUUID(), challenge: randomBytes(32) };
    const stored = await this.challenges.issue(
      {
        ...issued,
        purpose,
        userRegistryId: bound.userRegistryId ?? null,
        remoteIp,
        expiresDate: new Date(now.getTime() + CHALLENGE_LIFETIME_MS),
      },
      now,
      CHALLENGE_BOUNDS,
    );
    if (!stored) {
      throw new ProblemError(429, 'Too Many Requests', 'Too many passkey ceremonies are waiting; try again shortly.', {
        headers: { 'Retry-After': String(CHALLENGE_LIFETIME_MS / 1000) },
      });
    }
    return issued;
  }

  /** The challenge's bytes, taken for good; null when it is unknown, used, expired or not this one's. */
  async consume(id: unknown, purpose: ChallengePurpose, userRegistryId: number | null = null): Promise<Buffer | null> {
    const key = challengeKey(id);
    return key === null ? null : this.challenges.consume(key, purpose, userRegistryId, this.clock.now());
  }

  /** A challenge taken by another statement (a passkey sign-in's one read): its bytes, or null as `consume`. */
  accept(row: TakenChallenge | null, purpose: ChallengePurpose): Buffer | null {
    return acceptChallenge(row, purpose, null, this.clock.now());
  }

  purgeExpired(): Promise<void> {
    return this.challenges.purgeExpired(this.clock.now());
  }
}

/** The id as the table keys it (a lower-case UUID), or null when the caller's value cannot name a challenge. */
export function challengeKey(id: unknown): string | null {
  return typeof id === 'string' && UUID.test(id) ? id.toLowerCase() : null;
}
