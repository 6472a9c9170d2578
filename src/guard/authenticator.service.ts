import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ProblemError, unauthorized } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { ApiKeyValidator } from './api-key.validator';
import { JWT_COOKIE } from './cookies';
import { JwtVerifier } from './jwt-verifier';
import { Principal } from '../access/principal';

/** The credential a request presents, chosen exclusively: x-api-key, then bearer, then cookie. */
export type PresentedCredential =
  | { type: 'ApiKey'; value: string }
  | { type: 'Bearer' | 'Cookie'; value: string }
  | null;

export function presentedCredential(req: Request): PresentedCredential {
  const apiKey = req.headers['x-api-key'];
  if (apiKey !== undefined) return { type: 'ApiKey', value: Array.isArray(apiKey) ? apiKey[0] : apiKey };
  const authorization = req.headers.authorization;
  // Only `Bearer <token>` is a bearer credential; an empty one leaves the cookie in charge (contract 13).
  const bearer = authorization !== undefined && /^bearer\s/i.test(authorization) ? authorization.slice(7).trim() : '';
  if (bearer !== '') return { type: 'Bearer', value: bearer };
  const cookie = (req.cookies as Record<string, string> | undefined)?.[JWT_COOKIE];
  if (typeof cookie === 'string' && cookie !== '') return { type: 'Cookie', value: cookie };
  return null;
}

/**
 * Establishes the Principal of a request. The first credential present is the only one evaluated:
 * a broken API key is refused even when a valid cookie is also sent.
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly apiKeys: ApiKeyValidator,
    private readonly jwt: JwtVerifier,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  /**
   * Authenticates or throws a problem (401, or 503 when the user row cannot be read). Nothing is
   * written to the response: the sliding refresh is its own step (SlidingRefresh).
   */
  async authenticate(req: Request): Promise<Principal> {
    const credential = presentedCredential(req);
    if (!credential) throw unauthorized();
    if (credential.type === 'ApiKey') return this.apiKeys.validate(credential.value, req.get('user-agent') ?? null);
    const principal = await this.jwt.authenticate(credential.value, credential.type);
    principal.absoluteExpiration = new Date(principal.sessionStartDate!.getTime() + this.settings.sessionAbsoluteLifetimeMs);
    return principal;
  }

  /** Like authenticate, but answers null instead of throwing for a missing or invalid credential. */
  async tryAuthenticate(req: Request): Promise<Principal | null> {
    try {
      return await this.authenticate(req);
    } catch (error) {
      if (error instanceof ProblemError && error.status === 401) return null;
      throw error;
    }
  }
}
