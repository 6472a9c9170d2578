import { Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import type { Algorithm } from 'jsonwebtoken';
import { Strategy } from 'passport-jwt';
import { serviceUnavailable, unauthorized } from '../common/problem';
import { AuthenticationType, Principal } from './principal';
import { SessionActivityWriter } from './session-activity.writer';
import { TokenService } from './token.service';
import { mayAuthenticate, principalOf, UserStateReader } from './user-state.reader';

/** The raw token the authenticator chose for this request (bearer or cookie), and its kind. */
export type CredentialRequest = Request & { tmToken?: string; tmTokenType?: AuthenticationType };

/** The callbacks Passport attaches to a strategy for one attempt (passport-strategy's contract). */
interface StrategyAttempt {
  success(principal: Principal): void;
  fail(challenge?: unknown, status?: number): void;
  error(error: unknown): void;
  pass(): void;
  redirect(url: string): void;
  authenticate(req: Request, options?: object): void;
}

/**
 * passport-jwt verifies the signature (HS256 only, issuer, audience) with a KeyObject secret; this
 * validate step then checks times against the injected Clock and reads the user row with the token's
 * session (every request, one batched statement, fail closed): TokensValidFrom, absolute lifetime,
 * Active, Password Locked, deleted, and the session still open.
 */
@Injectable()
export class JwtStrategy {
  private readonly logger = new Logger('JwtStrategy');
  /**
   * passport-jwt's strategy, invoked per request the way Passport itself does (a fresh object over
   * the strategy with success/fail/error attached). Passport's global registry keeps one strategy
   * per name per process, so two applications in one process (tests, benchmarks) would verify with
   * whichever registered last; its middleware also cost ~40 µs a request here.
   */
  private readonly strategy: Strategy;

  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserStateReader,
    private readonly activity: SessionActivityWriter,
  ) {
    const options = tokens.verifyOptions;
    this.strategy = new Strategy(
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
    );
  }

  /** Verifies `token` for this request; rejects with a problem (401, or 503 when the user row cannot be read). */
  authenticate(req: Request, token: string, type: AuthenticationType): Promise<Principal> {
    const credentialRequest = req as CredentialRequest;
    credentialRequest.tmToken = token;
    credentialRequest.tmTokenType = type;
    return new Promise<Principal>((resolve, reject) => {
      const attempt = Object.create(this.strategy) as StrategyAttempt;
      attempt.success = resolve;
      attempt.error = reject;
      attempt.fail = () => reject(unauthorized());
      attempt.pass = () => reject(unauthorized());
      attempt.redirect = () => reject(unauthorized());
      attempt.authenticate(req, { session: false });
    });
  }

  async validate(req: CredentialRequest, payload: unknown): Promise<Principal> {
    const claims = this.tokens.checkClaims(payload);
    if (!claims) throw unauthorized();
    let read;
    try {
      read = await this.users.readWithSession(Number(claims.sub), claims.sid);
    } catch (error) {
      this.logger.error(`user row read failed, refusing the request: ${(error as Error).message}`);
      throw serviceUnavailable();
    }
    const { state, session } = read;
    if (!mayAuthenticate(state)) throw unauthorized();
    if (state.tokensValidFrom && claims.sst < state.tokensValidFrom.getTime()) throw unauthorized();
    // The session must still be open, and be this user's (contract 14).
    if (!session || session.userRegistryId !== state.id) throw unauthorized();
    this.activity.seen(session);
    return principalOf(state, {
      authenticationType: req.tmTokenType ?? 'Bearer',
      sessionStartDate: new Date(claims.sst),
      sessionId: claims.sid,
      expiration: new Date(claims.exp * 1000),
      apiKeyDisplay: null,
    });
  }
}
