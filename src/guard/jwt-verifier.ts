import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Request } from 'express';
import { Strategy } from 'passport-jwt';
import { serviceUnavailable, unauthorized } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { AuthenticationType, Principal } from '../access/principal';
import { SessionActivityWriter } from './session-activity.writer';
import { SessionClaims, TokenService } from './token.service';
import { mayAuthenticate, principalOf, UserStateReader } from './user-state.reader';

/** What passport-jwt extracts the token from: the token itself, already chosen by the Authenticator. */
interface TokenCarrier {
  token: string;
}

/** The callbacks Passport attaches to a strategy for one attempt (passport-strategy's contract). */
interface StrategyAttempt {
  success(payload: unknown): void;
  fail(challenge?: unknown, status?: number): void;
  error(error: unknown): void;
  pass(): void;
  redirect(url: string): void;
  authenticate(req: Request, options?: object): void;
}

/**
 * The one verification path of the service's JWTs, for the guard, logout and the pages alike.
 * passport-jwt verifies what a JWT library should: the signature (HS256 only, a KeyObject secret),
 * issuer and audience. TokenService.checkClaims then checks the claims' shape and the times against
 * the injected Clock (nbf/exp with the contract's 30 s skew, the absolute lifetime from `sst` with
 * none), which jsonwebtoken cannot do (it reads Date.now(), and knows no `sst`); passport-jwt's own
 * time checks are therefore off, not repeated. Authentication adds the user and session read (every
 * request, batched, fail closed).
 *
 * passport-jwt is invoked directly, as Passport itself invokes a strategy (a fresh object over it with
 * success/fail/error attached), not through Passport's middleware: its strategy chain falls through on
 * failure, which the exclusive precedence forbids (docs/decisions/0003), its process-wide registry
 * keeps one strategy per name (two applications in one process would share it), and its middleware
 * cost ~40 µs a request here (bench/RESULTS.md issue 2).
 */
@Injectable()
export class JwtVerifier {
  private readonly logger = new Logger('JwtVerifier');
  private readonly strategy: Strategy;

  constructor(
    private readonly tokens: TokenService,
    private readonly users: UserStateReader,
    private readonly activity: SessionActivityWriter,
    @Inject(SETTINGS) settings: AppSettings,
  ) {
    this.strategy = new Strategy(
      {
        jwtFromRequest: ((carrier: TokenCarrier) => carrier.token) as unknown as (req: Request) => string,
        secretOrKey: tokens.key as unknown as string,
        algorithms: ['HS256'],
        issuer: settings.jwtIssuer,
        audience: settings.jwtAudience,
        ignoreExpiration: true,
        jsonWebTokenOptions: { ignoreNotBefore: true },
      },
      (payload: unknown, done: (error: unknown, payload?: unknown) => void) => done(null, payload),
    );
  }

  /** The claims of `token` when it verifies (signature, algorithm, issuer, audience, shape, times); else null. */
  verify(token: string): Promise<SessionClaims | null> {
    return new Promise<SessionClaims | null>((resolve, reject) => {
      const attempt = Object.create(this.strategy) as StrategyAttempt;
      attempt.success = (payload) => resolve(this.tokens.checkClaims(payload));
      attempt.error = reject;
      attempt.fail = () => resolve(null);
      attempt.pass = () => resolve(null);
      attempt.redirect = () => resolve(null);
      attempt.authenticate({ token } satisfies TokenCarrier as unknown as Request, { session: false });
    });
  }

  /** The Principal of a bearer or cookie token; rejects with a problem (401, or 503 when the user row cannot be read). */
  async authenticate(token: string, type: AuthenticationType): Promise<Principal> {
    const claims = await this.verify(token);
    if (!claims) throw unauthorized();
    let read;
    try {
      read = await this.users.readWithSession(Number(claims.sub), claims.sid);
    } catch (error) {
      this.logger.warn(`user row read failed, refusing the request: ${(error as Error).message}`);
      throw serviceUnavailable();
    }
    const { state, session } = read;
    if (!mayAuthenticate(state)) throw unauthorized();
    if (state.tokensValidFrom && claims.sst < state.tokensValidFrom.getTime()) throw unauthorized();
    // The session must still be open, and be this user's (contract 14).
    if (!session || session.userRegistryId !== state.id) throw unauthorized();
    this.activity.seen(session);
    return principalOf(state, {
      authenticationType: type,
      sessionStartDate: new Date(claims.sst),
      sessionId: claims.sid,
      expiration: new Date(claims.exp * 1000),
      apiKeyDisplay: null,
    });
  }
}
