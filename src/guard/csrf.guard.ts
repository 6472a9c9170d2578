import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { forbidden } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { CSRF_EXEMPT } from '../access/decorators';
import { cookieAuthenticates, isProvablySameOrigin } from './same-origin';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The CSRF rule (contract 4 and 13, setting CsrfOriginCheck): a POST, PUT, PATCH or DELETE whose
 * credential is the session cookie must prove it is same-origin (Sec-Fetch-Site, else Origin, else
 * Referer), or it is refused with 403; cookies carry no antiforgery token. Only an x-api-key header
 * or `Authorization: Bearer <non-empty>` makes another credential the one that counts.
 *
 * A global guard registered before AccessGuard (auth.module.ts), so a refused request is never
 * authenticated, never gets a refreshed cookie and never writes a row. A route that legitimately
 * receives cross-site POSTs and never uses the cookie as its credential says so with @CsrfExempt()
 * (the OpenID Connect form_post callback). docs/decisions/0015.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  private readonly enabled: boolean;

  constructor(
    private readonly reflector: Reflector,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.enabled = settings.csrfOriginCheck;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.enabled || context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<Request>();
    // The method first: it settles every read at the cost of one set lookup.
    if (!UNSAFE.has(req.method) || !cookieAuthenticates(req)) return true;
    if (this.reflector.getAllAndOverride<boolean | undefined>(CSRF_EXEMPT, [context.getHandler(), context.getClass()])) return true;
    if (isProvablySameOrigin(req)) return true;
    throw forbidden('A request carrying the session cookie must come from this site.');
  }
}
