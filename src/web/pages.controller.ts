import { Controller, Get, Inject, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Authenticator, presentedCredential } from '../guard/authenticator.service';
import { SessionCookies } from '../guard/cookies';
import { JwtVerifier } from '../guard/jwt-verifier';
import { SlidingRefresh } from '../guard/sliding-refresh';
import { Public } from '../access/decorators';
import type { Principal } from '../access/principal';
import { notFound } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { pageShell, setSecurityHeaders } from './html';
import { findPage, PageAccess, PAGES } from './pages';
import { isLocalPath } from '../common/local-path';
import { WebAssets } from './web-assets.service';

function mayOpen(principal: Principal, access: PageAccess): boolean {
  if (access === 'anonymous' || access === 'session') return true;
  if (principal.landlord) return true;
  if (access === 'landlord') return false;
  return principal.permissions.includes(access.permission);
}

/**
 * Serves the page shells (contract 11). The routes are public so that a browser without a session is
 * redirected to the sign-in page (and back afterwards) rather than shown a 401 body; the data each
 * page shows still comes from the authenticated API.
 */
@ApiExcludeController()
@Controller()
export class PagesController {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly jwt: JwtVerifier,
    private readonly refresh: SlidingRefresh,
    private readonly cookies: SessionCookies,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  @Get(PAGES.map((page) => page.path))
  @Public()
  async page(@Req() req: Request, @Res() res: Response): Promise<void> {
    const page = findPage(req.path);
    if (!page) throw notFound();
    setSecurityHeaders(res);
    res.setHeader('Cache-Control', 'no-store');

    if (page.path === '/Account/Login' && this.settings.oauthAuthentication && req.query.error === undefined) {
      // Straight to the identity provider (service.md 5.2); after a failed return (?error=) the page
      // is shown instead, so a refusing provider cannot cause a redirect loop.
      const returnUrl = req.query.returnUrl;
      const query = isLocalPath(returnUrl) ? `?returnUrl=${encodeURIComponent(returnUrl)}` : '';
      res.redirect(302, `/api/Authentication/OAuth/Login${query}`);
      return;
    }

    if (page.access !== 'anonymous') {
      const principal = await this.authenticator.tryAuthenticate(req);
      if (!principal) {
        const back = isLocalPath(req.originalUrl) ? req.originalUrl : page.path;
        const ended = await this.endedSession(req, res);
        res.redirect(302, `/Account/Login?returnUrl=${encodeURIComponent(back)}${ended ? `&session=${ended}` : ''}`);
        return;
      }
      this.refresh.renew(req, res, principal);
      if (!mayOpen(principal, page.access)) {
        res.status(403).type('html').send(pageShell(page, { status: 'forbidden' }));
        return;
      }
    }
    res.status(200).type('html').send(pageShell(page));
  }

  /**
   * Why a browser that still holds a session cookie has no session, so the sign-in page can say so
   * instead of appearing out of nowhere: 'ended' when the token itself is still good (the session
   * was ended: a sign-out elsewhere, a password change, an administrator), 'expired' otherwise. The
   * dead cookies are cleared. Only the browser's own cookie is looked at, so nothing is revealed.
   */
  private async endedSession(req: Request, res: Response): Promise<'ended' | 'expired' | null> {
    const credential = presentedCredential(req);
    if (credential?.type !== 'Cookie') return null;
    this.cookies.clear(req, res);
    return (await this.jwt.verify(credential.value)) ? 'ended' : 'expired';
  }
}

/** The pages' scripts, styles and icon, from memory (see WebAssets). */
@ApiExcludeController()
@Controller('assets')
export class AssetsController {
  constructor(private readonly assets: WebAssets) {}

  @Get(':name')
  @Public()
  asset(@Param('name') name: string, @Req() req: Request, @Res() res: Response): void {
    const asset = this.assets.get(name);
    if (!asset) throw notFound();
    setSecurityHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.setHeader('ETag', asset.etag);
    if (req.get('if-none-match') === asset.etag) {
      res.status(304).end();
      return;
    }
    res.status(200).type(asset.contentType).send(asset.body);
  }
}
