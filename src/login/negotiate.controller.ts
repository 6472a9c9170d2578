import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiHeader,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { IsString, MaxLength, MinLength } from 'class-validator';
import type { Request, Response } from 'express';
import { Public } from '../access/decorators';
import { JsonBodyOnly } from '../common/body-rules';
import { notFound } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { enabledSchemes } from './enabled-schemes';
import { MfaRequiredDto, TokenDto } from './login.dto';
import { NegotiateEvidence, NegotiateScheme } from './negotiate.scheme';
import { SignInFlow } from './sign-in-flow.service';
import { SignInResult } from './sign-in-scheme';

export class NegotiateMfaDto {
  @ApiProperty({ description: 'The one-time passcode.', maxLength: 64 })
  @IsString()
  @MinLength(1)
  @MaxLength(64)
  mfa!: string;
}

/** Negotiate sign-in routes (service.md 4.1 and 5.2, contract 7). Thin: SignInFlow with NegotiateScheme. */
@ApiTags('Authentication')
@Controller('api/Authentication')
export class NegotiateController {
  private readonly enabled: boolean;
  private readonly secondFactorEnabled: boolean;

  constructor(
    private readonly flow: SignInFlow,
    private readonly scheme: NegotiateScheme,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.enabled = enabledSchemes(settings).negotiate;
    this.secondFactorEnabled = settings.enableMultifactorAuthentication;
  }

  @Get('ByNegotiate')
  @Public()
  @ApiOperation({ summary: 'Integrated (Kerberos/SPNEGO) sign-in; the browser answers the Negotiate challenge.' })
  @ApiHeader({ name: 'Authorization', required: false, description: '`Negotiate <token>`' })
  @ApiOkResponse({ type: TokenDto, description: 'Signed in; both cookies set; `WWW-Authenticate: Negotiate <token>` when the server has a final token.' })
  @ApiAcceptedResponse({ type: MfaRequiredDto, description: 'Identity proven; post the passcode to ByNegotiateMfa.' })
  @ApiUnauthorizedResponse({ description: '`WWW-Authenticate: Negotiate`: start or restart the handshake; or the user is not permitted.' })
  @ApiServiceUnavailableResponse({ description: 'The ticket could not be checked in time (Kerberos acceptor or database unavailable).' })
  @ApiNotFoundResponse({ description: 'NegotiateAuthentication is off.' })
  async byNegotiate(@Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<TokenDto | MfaRequiredDto> {
    if (!this.enabled) throw notFound();
    return this.answer(await this.flow.run(this.scheme, {}, req, res), res);
  }

  @Post('ByNegotiateMfa')
  @HttpCode(200)
  @Public()
  @JsonBodyOnly()
  @ApiOperation({ summary: 'The second factor after a 202 from ByNegotiate, under a new Negotiate handshake.' })
  @ApiHeader({ name: 'Authorization', required: true, description: '`Negotiate <token>`' })
  @ApiOkResponse({ type: TokenDto, description: 'Signed in; both cookies set.' })
  @ApiUnauthorizedResponse({ description: 'Handshake incomplete, user not permitted, or passcode rejected.' })
  @ApiNotFoundResponse({ description: 'NegotiateAuthentication or the second factor is off.' })
  async byNegotiateMfa(
    @Body() body: NegotiateMfaDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenDto | MfaRequiredDto> {
    if (!this.enabled || !this.secondFactorEnabled) throw notFound();
    return this.answer(await this.flow.run(this.scheme, { passcode: body.mfa }, req, res), res);
  }

  private answer(result: SignInResult<NegotiateEvidence>, res: Response): TokenDto | MfaRequiredDto {
    const { responseToken } = result.evidence;
    if (responseToken) res.setHeader('WWW-Authenticate', `Negotiate ${responseToken}`);
    if (result.kind === 'mfaRequired') {
      res.status(202);
      return { mfaRequired: true };
    }
    res.status(200);
    return { token: result.issued.token, expiration: result.issued.expiration.toISOString() };
  }
}
