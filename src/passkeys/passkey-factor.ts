import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { FailureTypeId } from '../sign-in-trail/audit.types';
import { clientAddress } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { ChallengePurpose } from './passkey-challenge.entity';
import { AssertionVerdict, credentialIdOf, PasskeyCeremonies } from './passkey-ceremonies';
import { PasskeyChallenges } from './passkey-challenges';
import { PasskeyUsageWriter } from './passkey-usage.writer';
import { UserPasskeyRepository } from './user-passkey.repository';

/** The second factor's prompt in a 202: the challenge's id and the request options (the user's passkeys allowed). */
export interface PasskeyPrompt {
  challengeId: string;
  options: unknown;
}

/** What the client posts back: the challenge's id and `credential.toJSON()`. */
export interface PasskeyAnswer {
  challengeId: string;
  response: unknown;
}

/**
 * A passkey as the second factor after a password (contract 20): asked of every user who holds an
 * active passkey while Passkeys is on; the challenge is bound to that user, and only that user's
 * passkeys answer it. SignInFlow orders it (under the password's place in the lockout count).
 */
@Injectable()
export class PasskeyFactor {
  constructor(
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly passkeys: UserPasskeyRepository,
    private readonly challenges: PasskeyChallenges,
    private readonly ceremonies: PasskeyCeremonies,
    private readonly usage: PasskeyUsageWriter,
  ) {}

  /** True when this user's sign-in must be completed by a passkey. */
  async applies(userRegistryId: number): Promise<boolean> {
    return this.settings.passkeys && this.passkeys.hasActive(userRegistryId);
  }

  async prompt(userRegistryId: number, req: Request): Promise<PasskeyPrompt> {
    const { id, challenge } = await this.challenges.issue(ChallengePurpose.SecondFactor, clientAddress(req), { userRegistryId });
    return { challengeId: id, options: await this.ceremonies.authenticationOptions(challenge, await this.passkeys.credentialsOf(userRegistryId)) };
  }

  /** Checks the answer: true, or 14 (another user's or an unknown credential, a bad assertion or challenge) or 15 (policy). */
  async verify(userRegistryId: number, answer: PasskeyAnswer, req: Request): Promise<AssertionVerdict> {
    const challenge = await this.challenges.consume(answer.challengeId, ChallengePurpose.SecondFactor, userRegistryId);
    const credentialId = credentialIdOf(answer.response);
    const credential = credentialId && (await this.passkeys.findActiveCredential(credentialId));
    if (!credential || credential.userRegistryId !== userRegistryId) return FailureTypeId.PasskeyAssertionInvalid;
    const verdict = await this.ceremonies.verifyAssertion(credential, answer.response, challenge);
    if (verdict === true) this.usage.touch(credential.id, req.get('user-agent') ?? null);
    return verdict;
  }
}
