import { Injectable, Logger } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import type { Algorithm } from 'jsonwebtoken';
import { Strategy } from 'passport-jwt';
import { ProblemError, serviceUnavailable, unauthorized } from '../common/problem';
import { AuthenticationType, Principal } from './principal';
import { TokenService } from './token.service';
import { UserStateReader } from './user-state.reader';

/** The raw token the authenticator chose for this request (bearer or cookie), and its kind. */
export type CredentialRequest = Request & { tmToken?: string; tmTokenType?: AuthenticationType };

export const JWT_STRATEGY = 'tm-jwt';

/**
 * passport-jwt verifies the signature (HS256 only, issuer, audience) with a KeyObject secret; this
 * validate step then checks times against the injected Clock and reads the user row (every request,
 * fail closed): TokensValidFrom, absolute lifetime, Active, Password Locked, deleted.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  private readonly logger = new Logger('JwtStrategy');

  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserStateReader,
  ) {
    const options = tokens.verifyOptions;
    super({
      jwtFromRequest: (req: CredentialRequest) => req.tmToken ?? null,
      secretOrKey: tokens.key as unknown as string,
      algorithms: options.algorithms as Algorithm[],
      issuer: options.issuer as string,
      audience: options.audience as string,
      ignoreExpiration: true,
      jsonWebTokenOptions: { ignoreNotBefore: true },
      passReqToCallback: true,
    });
  }

  async validate(req: CredentialRequest, payload: unknown): Promise<Principal> {
    const claims = this.tokens.checkClaims(payload);
    if (!claims) throw unauthorized();
    let state;
    try {
      state = await this.users.read(Number(claims.sub));
    } catch (error) {
      this.logger.error(`user row read failed, refusing the request: ${(error as Error).message}`);
      throw serviceUnavailable();
    }
    if (!state || state.deleted || !state.active || state.passwordLocked || !state.tenantActive) throw unauthorized();
    if (state.tokensValidFrom && claims.sst < state.tokensValidFrom.getTime()) throw unauthorized();
    return {
      userRegistryId: state.id,
      userName: state.name,
      tenantRegistryId: state.tenantRegistryId,
      tenantName: state.tenantName,
      landlord: state.landlord,
      permissions: state.permissions,
      authenticationType: req.tmTokenType ?? 'Bearer',
      sessionStartDate: new Date(claims.sst),
      expiration: new Date(claims.exp * 1000),
      absoluteExpiration: null,
      apiKeyDisplay: null,
    };
  }
}

export function isProblem(error: unknown): error is ProblemError {
  return error instanceof ProblemError;
}
