import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Request } from 'express';
import { AuthenticationTypeId } from '../sign-in-trail/audit.types';
import { ProblemError, serviceUnavailable } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { NegotiateAcceptor, userNameOfPrincipal } from './negotiate-acceptor';
import { Identified, SIGN_IN_FAILED, SignInFailure, SignInScheme } from './sign-in-scheme';

/** What ByNegotiate and ByNegotiateMfa carry: the passcode of the second request only. */
export interface NegotiateInput {
  passcode?: string;
}

/** The acceptor's final token, sent back as `WWW-Authenticate: Negotiate <token>` (mutual authentication). */
export interface NegotiateEvidence {
  responseToken: string | null;
}

const HANDSHAKE_REQUIRED = 'Negotiate authentication is required.';

/** A 401 that restarts the handshake: the browser answers `Negotiate` with a fresh token. */
export function negotiateChallenge(detail = SIGN_IN_FAILED): ProblemError {
  return new ProblemError(401, 'Unauthorized', detail, { headers: { 'WWW-Authenticate': 'Negotiate' } });
}

/**
 * Negotiate (integrated operating-system) sign-in (service.md 5.2, contract 7 and 12): the Kerberos
 * ticket is the proof, its principal (realm stripped) the user name. A handshake that does not complete
 * has no identity to record and answers 401 with a fresh challenge; every failure does. With the second
 * factor on, the GET answers 202 and the passcode is posted under a new handshake (every request proves
 * the identity again; nothing is remembered between the two, so any node can serve either).
 */
@Injectable()
export class NegotiateScheme implements SignInScheme<NegotiateInput, NegotiateEvidence>, OnApplicationBootstrap {
  readonly type = AuthenticationTypeId.Negotiate;
  private readonly logger = new Logger('Negotiate');

  constructor(
    private readonly acceptor: NegotiateAcceptor,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {}

  onApplicationBootstrap(): void {
    if (this.settings.negotiateAuthentication && !this.acceptor.available()) {
      this.logger.error('NegotiateAuthentication is on but the kerberos module is not available: every Negotiate sign-in will fail');
    }
  }

  claimedName(): null {
    return null;
  }

  async identify(_input: NegotiateInput, req: Request): Promise<Identified<NegotiateEvidence>> {
    const outcome = await this.acceptor.accept(req.get('authorization'));
    // The first leg of every browser's handshake: no attempt yet, nothing counted.
    if (outcome.kind === 'challenge') throw new SignInFailure(null, 'no Negotiate token', null, null, true);
    if (outcome.kind === 'refused') throw new SignInFailure(null, 'the Negotiate token was refused');
    // The ticket could not be checked (the acceptor timed out or is saturated): fail closed, honestly.
    if (outcome.kind === 'unavailable') throw serviceUnavailable('The Negotiate ticket could not be checked right now.');
    return { userName: userNameOfPrincipal(outcome.principal), evidence: { responseToken: outcome.responseToken } };
  }

  passcode(input: NegotiateInput): string | undefined {
    return input.passcode;
  }

  refusal(failure: SignInFailure): Error {
    return negotiateChallenge(failure.notAnAttempt ? HANDSHAKE_REQUIRED : SIGN_IN_FAILED);
  }
}
