import { Inject, Injectable } from '@nestjs/common';
import { createSecretKey, KeyObject } from 'node:crypto';
import * as jwt from 'jsonwebtoken';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';

/** JWT lifetime (service.md 2.2); the absolute session lifetime may cut it shorter. */
export const TOKEN_LIFETIME_MS = 15 * 60 * 1000;
/** Skew tolerated on nbf/exp only, never on the absolute lifetime or TokensValidFrom (contract 12). */
export const CLOCK_SKEW_MS = 30 * 1000;

export interface SessionClaims {
  sub: string;
  name: string;
  /** Session start, Unix milliseconds, carried unchanged by every refresh. */
  sst: number;
  /** The UserSession row of this sign-in (contract 14), carried unchanged by every refresh. */
  sid: string;
  iat: number;
  nbf: number;
  exp: number;
}

/** The session a token is issued for: its UserSession id and its start (the `sst` claim). */
export interface SessionRef {
  id: string;
  startMs: number;
}

/** The canonical text form of the UUIDs the service makes for session ids (crypto.randomUUID). */
export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface IssuedToken {
  token: string;
  expiration: Date;
  absoluteExpiration: Date;
  sessionStart: Date;
}

/**
 * Issues the service's own HS256 JWTs and holds their claim rules (JwtVerifier verifies them). The
 * secret is a KeyObject: jsonwebtoken 9 spends ~750 µs per verify on a string secret (it first tries it
 * as a public key) and ~15 µs on a KeyObject.
 */
@Injectable()
export class TokenService {
  readonly key: KeyObject;

  constructor(
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly clock: Clock,
  ) {
    this.key = createSecretKey(Buffer.from(settings.jwtKey, 'utf8'));
  }

  /** Issues a token of `session` (a new sign-in's, or the one a refresh keeps). */
  issue(user: { id: number; name: string }, session: SessionRef): IssuedToken {
    const now = this.clock.nowMs();
    const sst = session.startMs;
    const absoluteEnd = sst + this.settings.sessionAbsoluteLifetimeMs;
    const expMs = Math.min(now + TOKEN_LIFETIME_MS, absoluteEnd);
    const claims: SessionClaims & { iss: string; aud: string } = {
      sub: String(user.id),
      name: user.name,
      sst,
      sid: session.id,
      iat: Math.floor(now / 1000),
      nbf: Math.floor(now / 1000),
      exp: Math.floor(expMs / 1000),
      iss: this.settings.jwtIssuer,
      aud: this.settings.jwtAudience,
    };
    const token = jwt.sign(claims, this.key, { algorithm: 'HS256' });
    return {
      token,
      expiration: new Date(claims.exp * 1000),
      absoluteExpiration: new Date(absoluteEnd),
      sessionStart: new Date(sst),
    };
  }

  /**
   * Shape and time checks of a payload whose signature, issuer and audience JwtVerifier has verified
   * (the one verification path); null when they fail. Times against the injected Clock.
   */
  checkClaims(payload: unknown): SessionClaims | null {
    if (typeof payload !== 'object' || payload === null) return null;
    const p = payload as Partial<SessionClaims>;
    if (typeof p.sub !== 'string' || !/^\d{1,10}$/.test(p.sub)) return null;
    if (typeof p.sst !== 'number' || !Number.isSafeInteger(p.sst)) return null;
    // Checked here so a malformed id never reaches the batched read (a bad uuid would fail the whole batch).
    if (typeof p.sid !== 'string' || !SESSION_ID.test(p.sid)) return null;
    if (typeof p.exp !== 'number' || typeof p.nbf !== 'number' || typeof p.iat !== 'number') return null;
    const now = this.clock.nowMs();
    if (p.nbf * 1000 > now + CLOCK_SKEW_MS) return null;
    if (p.exp * 1000 <= now - CLOCK_SKEW_MS) return null;
    // The absolute lifetime is strict: no skew, and it holds even for a token whose exp says otherwise.
    if (now >= p.sst + this.settings.sessionAbsoluteLifetimeMs) return null;
    if (p.sst > now + CLOCK_SKEW_MS) return null;
    return p as SessionClaims;
  }
}
