import { Body, Controller, Get, HttpCode, Inject, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticated, CurrentPrincipal, Public } from '../access/decorators';
import type { Principal } from '../access/principal';
import { JsonBodyOnly } from '../common/body-rules';
import { notFound } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { UserAccounts } from '../users/user-accounts.service';
import {
  ChangePasswordDto,
  MfaRequiredDto,
  PasswordPublicKeyDto,
  PasswordSignInDto,
  TokenDto,
  WirePasswordHashDto,
  WirePasswordHashQueryDto,
} from './login.dto';
import { PasswordTransport } from '../users/password-transport';
import { enabledSchemes } from './enabled-schemes';
import { PasswordChange } from './password-change.service';
import { PasswordScheme } from './password.scheme';
import { SignInFlow } from './sign-in-flow.service';

/** Username and password sign-in and the password transport helpers (contract 3). */
@ApiTags('Authentication')
@Controller('api/Authentication')
export class PasswordController {
  private readonly enabled: boolean;
  /** A passcode may answer the second factor instead of a passkey (contract 20 `methods`). */
  private readonly passcodeToo: boolean;

  constructor(
    private readonly flow: SignInFlow,
    private readonly scheme: PasswordScheme,
    private readonly passwords: PasswordChange,
    private readonly transport: PasswordTransport,
    private readonly accounts: UserAccounts,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.enabled = enabledSchemes(settings).password;
    this.passcodeToo = enabledSchemes(settings).mfa;
  }

  @Post('ByUserNamePassword')
  @Public()
  @JsonBodyOnly()
  @ApiOkResponse({ type: TokenDto, description: 'Signed in; both cookies set.' })
  @ApiAcceptedResponse({ type: MfaRequiredDto, description: 'Password right; re-post with `mfa`, or `passkey` when `methods` lists it.' })
  @ApiForbiddenResponse({ description: 'Password expired: `code` is PasswordChangeRequired; re-post with newPassword.' })
  @ApiBadRequestResponse({ description: 'newPassword breaks rules; `errors` lists every rule.' })
  @ApiUnauthorizedResponse({ description: 'Any other failure, one answer for every cause.' })
  @ApiNotFoundResponse({ description: 'OAuth or Negotiate is enabled.' })
  async byUserNamePassword(
    @Body() body: PasswordSignInDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenDto | MfaRequiredDto> {
    if (!this.enabled) throw notFound();
    const result = await this.flow.run(this.scheme, body, req, res);
    if (result.kind === 'mfaRequired') {
      res.status(202);
      if (!result.passkey) return { mfaRequired: true };
      const methods = this.passcodeToo ? ['passkey', 'passcode'] : ['passkey'];
      return { mfaRequired: true, methods, challengeId: result.passkey.challengeId, options: result.passkey.options };
    }
    res.status(200);
    return { token: result.issued.token, expiration: result.issued.expiration.toISOString() };
  }

  @Post('ChangePassword')
  @HttpCode(200)
  @Authenticated()
  @JsonBodyOnly()
  @ApiOkResponse({ type: TokenDto, description: 'Every earlier session ended; this is the new one.' })
  @ApiBadRequestResponse({ description: 'Current password wrong, or the new one breaks rules.' })
  async changePassword(
    @Body() body: ChangePasswordDto,
    @CurrentPrincipal() principal: Principal,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<TokenDto> {
    if (!this.enabled) throw notFound();
    const issued = await this.passwords.changeOwnPassword(principal, body, req, res);
    return { token: issued.token, expiration: issued.expiration.toISOString() };
  }

  @Post('WirePasswordHash')
  @HttpCode(200)
  @Public()
  @JsonBodyOnly()
  @ApiOkResponse({ type: WirePasswordHashDto, description: 'Unknown users answer false, like most users.' })
  async wirePasswordHash(@Body() body: WirePasswordHashQueryDto): Promise<WirePasswordHashDto> {
    const account = await this.accounts.findByName(body.userName);
    return { wirePasswordHash: account?.wirePasswordHash ?? false };
  }

  @Get('PasswordPublicKey')
  @Public()
  @ApiOkResponse({ type: PasswordPublicKeyDto })
  passwordPublicKey(): PasswordPublicKeyDto {
    return { enabled: this.transport.enabled, algorithm: 'RSA-OAEP-256', publicKey: this.transport.publicKeyPem };
  }
}
