import { Body, Controller, Inject, Injectable, Post, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiNotFoundResponse, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { AuthenticationTypeId, FailureTypeId } from '../audit/audit.types';
import { Public } from '../access/decorators';
import { JsonBodyOnly } from '../common/body-rules';
import { notFound, unauthorized } from '../common/problem';
import { clientAddress } from '../common/request-context';
import { AppSettings, SETTINGS } from '../config/config.module';
import { TokenDto } from './login.dto';
import { SignInFlow } from './sign-in-flow.service';
import { Identified, SIGN_IN_FAILED, SignInFailure, SignInProof, SignInScheme } from './sign-in-scheme';
import type { SignInAccount } from '../users/user-accounts.service';
import { ChallengePurpose } from '../passkeys/passkey-challenge.entity';
import { credentialIdOf, PasskeyCeremonies } from '../passkeys/passkey-ceremonies';
import { PasskeyChallenges } from '../passkeys/passkey-challenges';
import { PasskeyUsageWriter } from '../passkeys/passkey-usage.writer';
import { PasskeyAssertionDto, PasskeyChallengeDto } from '../passkeys/passkeys.dto';
import { PasskeyCredential, UserPasskeyRepository } from '../passkeys/user-passkey.repository';

/** What a passkey sign-in carries from identification to its proof. */
export interface PasskeyEvidence {
  credential: PasskeyCredential;
  /** The challenge's bytes, or null when it was unknown, used, expired or of another purpose (then 14). */
  challenge: Buffer | null;
  response: unknown;
}

/**
 * Passkey sign-in (contract 20) as a strategy of the one flow (decision 0023): the credential id names
 * the user (13 when no active passkey has it: no user named, counted by the address's throttle); the
 * flow checks the user's state (2, 3); the assertion and its challenge are the proof (14), checked
 * under a place in the lockout count like a password, and then the policy and counter (15). A passkey
 * with user verification is both factors: no passcode follows.
 */
@Injectable()
export class PasskeyScheme implements SignInScheme<PasskeyAssertionDto, PasskeyEvidence> {
  readonly type = AuthenticationTypeId.Passkey;
  readonly proof: SignInProof<PasskeyEvidence>;

  constructor(
    private readonly passkeys: UserPasskeyRepository,
    private readonly challenges: PasskeyChallenges,
    ceremonies: PasskeyCeremonies,
    private readonly usage: PasskeyUsageWriter,
  ) {
    this.proof = {
      mismatch: FailureTypeId.PasskeyAssertionInvalid,
      missing: () => false,
      verify: (account, { credential, challenge, response }) =>
        // The account the flow found by name must be the passkey's own (a name freed and reused is not).
        account.id === credential.userRegistryId ? ceremonies.verifyAssertion(credential, response, challenge) : Promise.resolve(false),
      // No secret is guessed here: the credential id already named the account.
      imitate: async () => undefined,
    };
  }

  claimedName(): null {
    return null;
  }

  async identify(input: PasskeyAssertionDto): Promise<Identified<PasskeyEvidence>> {
    // Taken first, whatever follows: a challenge answers one attempt, right or wrong.
    const challenge = await this.challenges.consume(input.challengeId, ChallengePurpose.SignIn);
    const credentialId = credentialIdOf(input.response);
    const credential = credentialId && (await this.passkeys.findActiveCredential(credentialId));
    if (!credential) throw new SignInFailure(FailureTypeId.UnknownPasskey, 'no active passkey has this credential id');
    return { userName: credential.userName, evidence: { credential, challenge, response: input.response } };
  }

  async beforeSession(_account: SignInAccount, _input: PasskeyAssertionDto, evidence: PasskeyEvidence, req: Request): Promise<void> {
    this.usage.touch(evidence.credential.id, req.get('user-agent') ?? null);
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
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.enabled = settings.passkeys;
  }

  @Post('Passkey/Options')
  @Public()
  @ApiOkResponse({ type: PasskeyChallengeDto, description: 'Request options with no allowed credentials (discoverable credentials, autofill).' })
  @ApiNotFoundResponse({ description: 'Passkeys is off.' })
  async options(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<PasskeyChallengeDto> {
    if (!this.enabled) throw notFound();
    const { id, challenge } = await this.challenges.issue(ChallengePurpose.SignIn, clientAddress(req));
    res.status(200);
    return { challengeId: id, options: { ...(await this.ceremonies.authenticationOptions(challenge)) } };
  }

  @Post('ByPasskey')
  @Public()
  @JsonBodyOnly()
  @ApiOkResponse({ type: TokenDto, description: 'Signed in; both cookies set.' })
  @ApiUnauthorizedResponse({ description: 'Any failure, one answer for every cause.' })
  @ApiNotFoundResponse({ description: 'Passkeys is off.' })
  async byPasskey(@Body() body: PasskeyAssertionDto, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<TokenDto> {
    if (!this.enabled) throw notFound();
    const result = await this.flow.run(this.scheme, body, req, res);
    // The scheme has no second factor: a sign-in is either done or refused.
    if (result.kind !== 'signedIn') throw unauthorized(SIGN_IN_FAILED);
    res.status(200);
    return { token: result.issued.token, expiration: result.issued.expiration.toISOString() };
  }
}
