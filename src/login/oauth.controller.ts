import { Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import { ApiFoundResponse, ApiNotFoundResponse, ApiOperation, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import type { Request, Response } from 'express';
import { CsrfExempt, Public } from '../access/decorators';
import { notFound } from '../common/problem';
import { OAuthScheme, SignInRedirect } from './oauth.scheme';
import { SignInFlow } from './sign-in-flow.service';

export class OAuthLoginQueryDto {
  @ApiPropertyOptional({ description: 'Where to go after signing in; only a local path is honoured, anything else means /.', maxLength: 2048 })
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  returnUrl?: string;
}

/**
 * OpenID Connect sign-in routes (contract 8). Both answer with redirects: the login page sends the
 * browser here, this sends it to the provider, the provider sends it back to the callback, and the
 * callback sends it to the local return URL (or to /Account/Login?error=<code>). Thin: SignInFlow with
 * OAuthScheme, as every scheme.
 */
@ApiTags('Authentication')
@Controller('api/Authentication/OAuth')
export class OAuthController {
  constructor(
    private readonly flow: SignInFlow,
    private readonly oauth: OAuthScheme,
  ) {}

  @Get('Login')
  @Public()
  @ApiOperation({ summary: 'Starts an authorization-code flow with PKCE at the identity provider.' })
  @ApiFoundResponse({ description: 'To the identity provider, or to /Account/Login?error=<code> when it cannot be reached.' })
  @ApiNotFoundResponse({ description: 'OAuthAuthentication is off.' })
  async login(@Query() query: OAuthLoginQueryDto, @Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.oauth.enabled) throw notFound();
    res.redirect(302, await redirectOrRefusal(this.flow.begin(this.oauth, req, () => this.oauth.authorizationUrl(req, res, query.returnUrl))));
  }

  @Post('Callback')
  @Public()
  // The provider's page posts this form, so it is cross-origin by design. With a provider on a sibling
  // host of the same site (sso.bank.example for tm.bank.example) the browser sends the SameSite=Lax or
  // Strict session cookie along, marked Sec-Fetch-Site: same-site, and the CSRF rule would refuse the
  // sign-in of anyone already holding a session cookie. The cookie is never this route's credential:
  // the sign-in rests on the sealed state, its browser binding, the nonce and PKCE (oauth-state.ts).
  @CsrfExempt()
  @ApiOperation({ summary: 'The authorization response by form_post (the default).' })
  @ApiFoundResponse({ description: 'Signed in: to the local return URL (or OAuthForceRedirect); failed: to /Account/Login?error=<code>.' })
  @ApiNotFoundResponse({ description: 'OAuthAuthentication is off.' })
  async callbackPost(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.oauth.enabled) throw notFound();
    res.redirect(302, await this.callback(req, res, 'POST'));
  }

  @Get('Callback')
  @Public()
  @ApiOperation({ summary: 'The authorization response in the query string (with OAuthForceGet).' })
  @ApiFoundResponse({ description: 'Signed in: to the local return URL (or OAuthForceRedirect); failed: to /Account/Login?error=<code>.' })
  @ApiNotFoundResponse({ description: 'OAuthAuthentication is off.' })
  async callbackGet(@Req() req: Request, @Res() res: Response): Promise<void> {
    if (!this.oauth.enabled) throw notFound();
    res.redirect(302, await this.callback(req, res, 'GET'));
  }

  /** The callback, by GET (query) or POST (form_post): where to send the browser next. */
  private callback(req: Request, res: Response, method: 'GET' | 'POST'): Promise<string> {
    return redirectOrRefusal(this.flow.run(this.oauth, { method }, req, res).then((result) => this.oauth.landing(result)));
  }
}

/** The location to send the browser to: `next`'s, or the refusal's (a SignInRedirect, its row already written). */
async function redirectOrRefusal(next: Promise<string>): Promise<string> {
  try {
    return await next;
  } catch (error) {
    if (error instanceof SignInRedirect) return error.location;
    throw error;
  }
}
