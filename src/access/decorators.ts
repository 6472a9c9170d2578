import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiCookieAuth, ApiBearerAuth, ApiForbiddenResponse, ApiOperation, ApiSecurity, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { PERMISSION_NAMES } from './permissions';
import { AuthenticatedRequest, Principal } from './principal';

export const IS_PUBLIC = 'tm:isPublic';
export const ACCESS_RULE = 'tm:access';
export const CSRF_EXEMPT = 'tm:csrfExempt';

/** What a route demands beyond an authenticated caller. */
export interface AccessRule {
  /** A permission specification id (contract 6); a landlord holds them all. */
  permission?: number;
  /** Only users of the landlord tenant. */
  landlord?: boolean;
}

/** Opens a route to anonymous callers. Every other route is denied without a credential. */
export const Public = () => applyDecorators(SetMetadata(IS_PUBLIC, true), ApiOperation({ security: [] }));

/**
 * Lifts the CSRF rule (guard/csrf.guard.ts) from a route that legitimately receives cross-site POSTs
 * and never takes the session cookie as its credential. Each use says why, where it is used.
 */
export const CsrfExempt = () => SetMetadata(CSRF_EXEMPT, true);

/**
 * Requires an authenticated caller and, optionally, a permission or the landlord tenant. The rule is
 * enforced by the global guard and documented in the OpenAPI document in the same place.
 */
export function Authenticated(rule: AccessRule = {}) {
  const needs = [
    rule.permission !== undefined ? `permission ${rule.permission} (${PERMISSION_NAMES[rule.permission] ?? 'unknown'})` : null,
    rule.landlord ? 'a landlord tenant user' : null,
  ].filter(Boolean);
  return applyDecorators(
    SetMetadata(ACCESS_RULE, rule),
    ApiSecurity('x-api-key'),
    ApiBearerAuth(),
    ApiCookieAuth('authentication-jwt'),
    ApiUnauthorizedResponse({ description: 'No valid credential.' }),
    ...(needs.length > 0 ? [ApiForbiddenResponse({ description: `Requires ${needs.join(' and ')}.` })] : []),
  );
}

/** The authenticated caller of this request. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (!principal) throw new Error('CurrentPrincipal used on a route without authentication');
  return principal;
});
