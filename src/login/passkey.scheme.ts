import { Body, Controller, Inject, Injectable, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiNotFoundResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AuthenticationTypeId, FailureTypeId } from '../sign-in-trail/audit.types';
import { Public } from '../access/decorators';
import { JsonBodyOnly } from '../common/body-rules';
import { notFound, unauthorized } from '../common/problem';
import { clientAddress } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { MfaRequiredDto, TokenDto } from './login.dto';
import { SignInFlow } from './sign-in-flow.service';
import { Identified, SIGN_IN_FAILED, SignInFailure, SignInProof, SignInScheme } from './sign-in-scheme';
import { ChallengePurpose } from '../passkeys/passkey-challenge.entity';
import { credentialIdOf, PasskeyCeremonies } from '../passkeys/passkey-ceremonies';
import { challengeKey, PasskeyChallenges } from '../passkeys/passkey-challenges';
import { PasskeyUsageWriter } from '../passkeys/passkey-usage.writer';
import { PasskeyChallengeDto, PasskeySignInDto } from '../passkeys/passkeys.dto';
import { PasskeyCredential, UserPasskeyRepository } from '../passkeys/user-passkey.repository';

/** What a passkey sign-in carries from identification to its proof. */
export interface PasskeyEvidence {
  credential: PasskeyCredential;
  /** The challenge's bytes, or null when it was unknown, used, expired or of another purpose (then 14). */
  challenge: Buffer | null;
  response: unknown;
  /** Set once the assertion verified: whether the authenticator verified its user (both factors then). */
  userVerified?: boolean;
}

/**
 * Passkey sign-in (contract 20) as a strategy of the one flow (decision 0023): the credential id names
 * the user (13 when no active passkey has it: no user named, counted by the address's throttle); the
 * flow checks the user's state (2, 3); the assertion and its challenge are the proof (14), checked
 * under a place in the lockout count like a password, and then the policy and counter (15). A passkey
 * with user verification is both factors: no passcode follows; one without it (accepted only under
 * PasskeyUserVerification=preferred) is one factor, and the passcode, where on, follows (the flow's 202).
 */
@Injectable()
export class PasskeyScheme implements SignInScheme<PasskeySignInDto, PasskeyEvidence> {
  readonly type = AuthenticationTypeId.Passkey;
  readonly proof: SignInProof<PasskeyEvidence>;

  constructor(
    private readonly passkeys: UserPasskeyRepository,
    private readonly challenges: PasskeyChallenges,
    ceremonies: PasskeyCeremonies,
  ) {
    this.proof = {
      mismatch: FailureTypeId.PasskeyAssertionInvalid,
      missing: () => false,
      verify: async (account, evidence) => {
        // The account must be the passkey's own (read by the credential's user id; checked all the same).
        if (account.id !== evidence.credential.userRegistryId) return false;
        const { verdict, userVerified } = await ceremonies.checkAssertion(evidence.credential, evidence.response, evidence.challenge);
        evidence.userVerified = userVerified;
        return verdict;
      },
      // No secret is guessed here: the credential id already named the account.
      imitate: async () => undefined,
    };
  }

  claimedName(): null {
    return null;
  }

  async identify(input: PasskeySignInDto): Promise<Identified<PasskeyEvidence>> {
    // One statement: the challenge taken first, whatever follows (a challenge answers one attempt, right
    // or wrong), the credential, and its user's state (the flow's account read, handed over).
    const taken = await this.passkeys.takeForSignIn(challengeKey(input.challengeId), credentialIdOf(input.response));
    const challenge = this.challenges.accept(taken.challenge, ChallengePurpose.SignIn);
    const { credential, account } = taken;
    if (!credential) throw new SignInFailure(FailureTypeId.UnknownPasskey, 'no active passkey has this credential id');
    return { userName: credential.userName, account, evidence: { credential, challenge, response: input.response } };
  }

  bothFactors(evidence: PasskeyEvidence): boolean {
    return evidence.userVerified === true;
  }

  passcode(input: PasskeySignInDto): string | undefined {
    return input.mfa || undefined;
  }

  refusal(): Error {
    return unauthorized(SIGN_IN_FAILED);
  }
}

/** Passkey sign-in routes (contract 20). Thin: SignInFlow with PasskeyScheme. */
@ApiTags('Authentication')
@Controller('api/Authentication')
export class PasskeySignInController {
  private readonly enabled: boolean;

  constructor(
    private readonly flow: SignInFlow,
    private readonly scheme: PasskeyScheme,
    private readonly challenges: PasskeyChallenges,
    private readonly ceremonies: PasskeyCeremonies,
    private readonly usage: PasskeyUsageWriter,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.enabled = settings.passkeys;
  }

  /** The request options but the challenge, built once (the same for every discoverable sign-in). */
  private template?: ReturnType<PasskeyCeremonies['authenticationOptions']>;

  @Post('Passkey/Options')
  @Public()
  @ApiOkResponse({ type: PasskeyChallengeDto, description: 'Request options with no allowed credentials (discoverable credentials, autofill).' })
  @ApiNotFoundResponse({ description: 'Passkeys is off.' })
  async options(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<PasskeyChallengeDto> {
    if (!this.enabled) throw notFound();
    const { id, challenge } = await this.challenges.issue(ChallengePurpose.SignIn, clientAddress(req));
    this.template ??= this.ceremonies.authenticationOptions(Buffer.alloc(32));
    res.status(200);
    return { challengeId: id, options: { ...(await this.template), challenge: challenge.toString('base64url') } };
  }

  @Post('ByPasskey')
  @Public()
  @JsonBodyOnly()
  @ApiOkResponse({ type: TokenDto, description: 'Signed in; both cookies set.' })
  @ApiAcceptedResponse({
    type: MfaRequiredDto,
    description: 'The passkey did not verify its user (PasskeyUserVerification=preferred) and the passcode is on: post again with a fresh assertion plus `mfa`.',
  })
  @ApiUnauthorizedResponse({ description: 'Any failure, one answer for every cause.' })
  @ApiNotFoundResponse({ description: 'Passkeys is off.' })
  async byPasskey(@Body() body: PasskeySignInDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<TokenDto | MfaRequiredDto> {
    if (!this.enabled) throw notFound();
    const result = await this.flow.run(this.scheme, body, req, res);
    if (result.kind === 'mfaRequired') {
      // The passkey was one factor (no user verification): the passcode is asked for, as after a password.
      res.status(202);
      return { mfaRequired: true };
    }
    this.usage.touch(result.evidence.credential.id, req.get('user-agent') ?? null);
    res.status(200);
    return { token: result.issued.token, expiration: result.issued.expiration.toISOString() };
  }
}
