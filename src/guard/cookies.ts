import { Inject, Injectable } from '@nestjs/common';
import type { CookieOptions, Request, Response } from 'express';
import { AppSettings, SETTINGS } from '../config/config.module';
import { IssuedToken } from './token.service';

export const JWT_COOKIE = 'authentication-jwt';
export const EXPIRY_COOKIE = 'authentication-expiry';

/**
 * Writes and deletes the two authentication cookies (contract 4). The JWT cookie is HttpOnly; the
 * expiry cookie is readable by script so the page can show the countdown.
 */
@Injectable()
export class SessionCookies {
  constructor(@Inject(SETTINGS) private readonly settings: AppSettings) {}

  private base(req: Request): CookieOptions {
    return {
      path: '/',
      sameSite: this.settings.secureHttpCookie ? 'strict' : 'lax',
      secure: this.settings.secureHttpCookie || req.secure,
    };
  }

  set(req: Request, res: Response, issued: IssuedToken): void {
    const base = this.base(req);
    const expires = this.settings.sessionCookie ? undefined : issued.expiration;
    res.cookie(JWT_COOKIE, issued.token, { ...base, httpOnly: true, expires });
    res.cookie(EXPIRY_COOKIE, issued.expiration.toISOString(), { ...base, httpOnly: false, expires });
  }

  clear(req: Request, res: Response): void {
    const base = this.base(req);
    res.clearCookie(JWT_COOKIE, { ...base, httpOnly: true });
    res.clearCookie(EXPIRY_COOKIE, { ...base, httpOnly: false });
  }
}
