import { Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppSettings, SETTINGS } from '../config/config.module';
import { SessionCookies } from './cookies';
import { Principal } from '../access/principal';
import { TokenService } from './token.service';

/**
 * The sliding refresh (contract 4): every cookie-authenticated request gets a fresh 15-minute token in
 * fresh cookies, keeping the session and its start; bearer and API-key requests get none. A separate
 * step after authentication, not part of it, so a caller that only wants to know who is calling (the
 * logout) sets no cookie it must then take back. Applied by the global guard right after it
 * authenticates (before the handler, so GET /api/Authentication/Session answers the new expiration),
 * and by the pages and the explorer, which authenticate inside public routes.
 */
@Injectable()
export class SlidingRefresh {
  constructor(
    private readonly tokens: TokenService,
    private readonly cookies: SessionCookies,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /** Refreshes `principal`'s cookie session on `res` (nothing for bearer or API-key callers); updates its expiration. */
  renew(req: Request, res: Response, principal: Principal): void {
    if (principal.authenticationType !== 'Cookie') return;
    const issued = this.tokens.issue(
      { id: principal.userRegistryId, name: principal.userName },
      { id: principal.sessionId!, startMs: principal.sessionStartDate!.getTime() },
    );
    this.cookies.set(req, res, issued);
    principal.expiration = issued.expiration;
  }
}
