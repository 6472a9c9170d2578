import { Controller, HttpCode, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiForbiddenResponse, ApiHeader, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { SessionCookies } from '../guard/cookies';
import { Public } from '../access/decorators';
import { LOGOUT_WARNING_HEADER, LogoutService } from './logout.service';

/** Logout (service.md 3.2 and 4.1). There is deliberately no GET: a GET never logs anyone out. */
@ApiTags('Authentication')
@Controller('api/Authentication')
export class LogoutController {
  private readonly logger = new Logger('Logout');

  constructor(
    private readonly logouts: LogoutService,
    private readonly cookies: SessionCookies,
  ) {}

  @Post('Logout')
  @Public()
  @HttpCode(200)
  @ApiOkResponse({
    description: 'Always, with both cookies deleted and an empty body. A valid session is revoked on every node.',
    headers: { [LOGOUT_WARNING_HEADER]: { description: '`revocation-failed` when the revocation could not be written.', schema: { type: 'string' } } },
  })
  @ApiHeader({ name: 'x-api-key', required: false, description: 'A request with an API key is not a browser session: nothing is revoked.' })
  @ApiForbiddenResponse({ description: 'The request carries the session cookie and is not provably same-origin.' })
  async logout(@Req() req: Request, @Res() res: Response): Promise<void> {
    try {
      await this.logouts.logout(req, res);
    } catch (error) {
      // Fail closed for the browser: whatever broke, its cookies go and the answer is 200.
      this.logger.error(`logout failed unexpectedly: ${(error as Error).message}`);
      res.removeHeader('Set-Cookie');
      this.cookies.clear(req, res);
      res.setHeader(LOGOUT_WARNING_HEADER, 'revocation-failed');
    }
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).end();
  }
}
