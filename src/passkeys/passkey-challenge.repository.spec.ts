import { acceptChallenge } from './passkey-challenge.repository';
import { ChallengePurpose } from './passkey-challenge.entity';

describe('acceptChallenge (a taken challenge is worth its bytes only while it is this one)', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  const bytes = Buffer.alloc(32, 7);
  const row = (changes: Partial<{ expires: Date; purpose: number; owner: number | null }> = {}) => ({
    challenge: bytes,
    expires: new Date(now.getTime() + 60_000),
    purpose: ChallengePurpose.SignIn,
    owner: null,
    ...changes,
  });

  it('answers the bytes of a live challenge of the purpose asked', () => {
    expect(acceptChallenge(row(), ChallengePurpose.SignIn, null, now)).toBe(bytes);
  });

  it('refuses none taken, an expired one (at its expiry too), another purpose, another user\'s', () => {
    expect(acceptChallenge(null, ChallengePurpose.SignIn, null, now)).toBeNull();
    expect(acceptChallenge(row({ expires: now }), ChallengePurpose.SignIn, null, now)).toBeNull();
    expect(acceptChallenge(row(), ChallengePurpose.SecondFactor, null, now)).toBeNull();
    expect(acceptChallenge(row({ purpose: ChallengePurpose.SecondFactor, owner: 5 }), ChallengePurpose.SecondFactor, 6, now)).toBeNull();
    expect(acceptChallenge(row({ purpose: ChallengePurpose.SecondFactor, owner: 5 }), ChallengePurpose.SecondFactor, 5, now)).toBe(bytes);
  });
});
