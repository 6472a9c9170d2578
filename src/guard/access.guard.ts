import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { forbidden } from '../common/problem';
import { Authenticator } from './authenticator.service';
import { SlidingRefresh } from './sliding-refresh';
import { ACCESS_RULE, AccessRule, IS_PUBLIC } from '../access/decorators';
import { AuthenticatedRequest } from '../access/principal';

/**
 * The one global guard: every route is denied to anonymous callers unless marked @Public().
 * Permissions are evaluated here from the user row read on this request, never from token claims.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly refresh: SlidingRefresh,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;

    const req = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    const principal = await this.authenticator.authenticate(req);
    req.principal = principal;
    // Contract 4: every cookie-authenticated request gets fresh cookies, one refused below included.
    // A step of its own here rather than a Nest interceptor, which cost ~40 µs of CPU on every request
    // (docs/decisions/0009).
    this.refresh.renew(req, res, principal);

    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_RULE, targets) ?? {};
    if (rule.landlord && !principal.landlord) throw forbidden();
    if (rule.permission !== undefined && !principal.landlord && !principal.permissions.includes(rule.permission)) {
      throw forbidden();
    }
    return true;
  }
}
