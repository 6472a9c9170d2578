import { Injectable, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Algorithm } from 'jsonwebtoken';
import { Passport } from 'passport';
import { Strategy } from 'passport-jwt';
import { serviceUnavailable, unauthorized } from '../common/problem';
import { AuthenticationType, Principal } from './principal';
import { TokenService } from './token.service';
import { mayAuthenticate, principalOf, UserStateReader } from './user-state.reader';

/** The raw token the authenticator chose for this request (bearer or cookie), and its kind. */
export type CredentialRequest = Request & { tmToken?: string; tmTokenType?: AuthenticationType };

const JWT_STRATEGY = 'tm-jwt';

/**
 * passport-jwt verifies the signature (HS256 only, issuer, audience) with a KeyObject secret; this
 * validate step then checks times against the injected Clock and reads the user row (every request,
 * fail closed): TokensValidFrom, absolute lifetime, Active, Password Locked, deleted.
 */
@Injectable()
export class JwtStrategy {
  private readonly logger = new Logger('JwtStrategy');
  /**
   * A Passport instance of this application's own: the global one keeps strategies by name per
   * process, so two applications in one process (tests, benchmarks) would verify with whichever
   * registered last, against its database and clock.
   */
  private readonly passport = new Passport();

  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserStateReader,
  ) {
    const options = tokens.verifyOptions;
    this.passport.use(
      JWT_STRATEGY,
      new Strategy(
        {
          jwtFromRequest: (req: CredentialRequest) => req.tmToken ?? null,
          secretOrKey: tokens.key as unknown as string,
          algorithms: options.algorithms as Algorithm[],
          issuer: options.issuer as string,
          audience: options.audience as string,
          ignoreExpiration: true,
          jsonWebTokenOptions: { ignoreNotBefore: true },
          passReqToCallback: true,
        },
        (req: CredentialRequest, payload: unknown, done: (error: unknown, principal?: Principal | false) => void) => {
          this.validate(req, payload).then(
            (principal) => done(null, principal),
            (error: unknown) => done(error),
          );
        },
      ),
    );
  }

  /** Verifies `token` for this request; rejects with a problem (401, or 503 when the user row cannot be read). */
  authenticate(req: Request, res: Response, token: string, type: AuthenticationType): Promise<Principal> {
    const credentialRequest = req as CredentialRequest;
    credentialRequest.tmToken = token;
    credentialRequest.tmTokenType = type;
    return new Promise<Principal>((resolve, reject) => {
      this.passport.authenticate(JWT_STRATEGY, { session: false }, (error: unknown, principal: Principal | false) => {
        if (error) reject(error);
        else if (!principal) reject(unauthorized());
        else resolve(principal);
      })(req, res, reject);
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
    if (!mayAuthenticate(state)) throw unauthorized();
    if (state.tokensValidFrom && claims.sst < state.tokensValidFrom.getTime()) throw unauthorized();
    return principalOf(state, {
      authenticationType: req.tmTokenType ?? 'Bearer',
      sessionStartDate: new Date(claims.sst),
      expiration: new Date(claims.exp * 1000),
      apiKeyDisplay: null,
    });
  }
}
