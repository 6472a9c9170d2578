import type { Request, Response } from 'express';
import { AuthenticationTypeId, FailureTypeId } from '../sign-in-trail/audit.types';
import type { IssuedToken } from '../guard/token.service';
import type { PasskeyAnswer, PasskeyPrompt } from '../passkeys/passkey-factor';
import type { SignInAccount } from '../users/user-accounts.service';

/** The one answer for every failed sign-in, whatever the cause (contract 3). */
export const SIGN_IN_FAILED = 'The user name, password or passcode is not valid.';

/**
 * The one way a sign-in fails. Thrown by a scheme or by the flow; SignInFlow alone turns it into the
 * UserLogin row and then into the scheme's answer (`SignInScheme.refusal`).
 */
export class SignInFailure extends Error {
  constructor(
    /** The row's FailureTypeId; null when there is no attempt to record (a handshake that never carried a ticket). */
    readonly failureTypeId: FailureTypeId | null,
    /** Why, for the log and for provider failures' FailureMessage (the writer keeps it for those only). */
    message: string,
    /** The name the caller gave or proved, when no account matched it. */
    readonly createdUser: string | null = null,
    readonly account: SignInAccount | null = null,
    /**
     * The request was no attempt at all (the first leg of a handshake): the throttle place is given back.
     * Every other failure keeps it (contract 13: failures count).
     */
    readonly notAnAttempt = false,
  ) {
    super(message);
  }
}

/**
 * Who the caller says (or has proved) it is, and what the scheme needs later in the same request (the
 * opened password fields, the Negotiate response token, the OIDC return URL); never kept beyond it.
 */
export interface Identified<Evidence> {
  /** Matched case-insensitively to an existing user; no account is ever created. */
  userName: string;
  /** Scheme data the flow hands back untouched (the Negotiate response token, the OIDC return URL). */
  evidence: Evidence;
  /**
   * The account, when the scheme read it in the same statement as its identification (a passkey's
   * credential and its user's state: one round trip); null when that user is gone. Undefined: the flow
   * looks `userName` up.
   */
  account?: SignInAccount | null;
}

/**
 * A secret the flow checks under a reserved place in the account's failure count (contract 13), for
 * schemes whose identification is only a claim (a user name). A scheme whose identification is itself
 * the proof (a Kerberos ticket, a signed ID token) has none.
 */
export interface SignInProof<Evidence> {
  /** FailureTypeId of a proof that does not verify. */
  readonly mismatch: FailureTypeId;
  /** True when no proof was sent (refused early, FailureTypeId NoPassword). */
  missing(evidence: Evidence): boolean;
  /**
   * Checks the proof against the account (an Argon2 verify, a passkey assertion): true, or false for
   * `mismatch`, or the FailureTypeId of a refusal of its own (a passkey refused by policy, 15).
   */
  verify(account: SignInAccount, evidence: Evidence): Promise<boolean | FailureTypeId>;
  /** The same work as `verify` without an account, so that a refusal costs what a verify costs. */
  imitate(evidence: Evidence): Promise<void>;
}

/**
 * What one sign-in scheme varies: how an identity is established, and what a failure looks like to
 * its caller. Everything security-critical (throttle, user checks, lockout count, second factor, the
 * UserLogin row, session, token and cookies) is SignInFlow's and runs the same for every scheme
 * (docs/decisions/0023-one-sign-in-flow.md).
 */
export interface SignInScheme<Input, Evidence = undefined> {
  /** AuthenticationTypeId of its UserLogin and UserSession rows. */
  readonly type: AuthenticationTypeId;
  /** The name the throttle's refusal row carries, before anything is established (null: none known yet). */
  claimedName(input: Input): string | null;
  /**
   * Establishes who the caller is, after the throttle admitted the request and before the user is
   * looked up. Throws SignInFailure to refuse; any other error is an outage (or, with `unexpected`, a
   * refusal).
   */
  identify(input: Input, req: Request, res: Response): Promise<Identified<Evidence>>;
  /** The secret checked under the lockout count, when identification is only a claim. */
  readonly proof?: SignInProof<Evidence>;
  /**
   * Steps after a right proof that stop the sign-in with their own answer (a password that must be
   * changed first): returns the FailureTypeId of its row and the error to answer with, or null to go on.
   */
  afterProof?(account: SignInAccount, input: Input, evidence: Evidence): { failureTypeId: FailureTypeId; answer: Error } | null;
  /**
   * The one-time passcode when the second factor is on (undefined asks for it: 202). A scheme without
   * this method takes no second factor (OpenID Connect: the provider owns it).
   */
  passcode?(input: Input): string | undefined;
  /**
   * True when the verified proof was both factors (a passkey with user verification, contract 20): no
   * passcode follows. Asked only after the proof verified; without it, `passcode` applies as for a password.
   */
  bothFactors?(evidence: Evidence): boolean;
  /**
   * The passkey answering the second factor (contract 20), for a scheme that takes one; asked of users
   * who hold an active passkey (undefined asks for it: 202 with the challenge).
   */
  passkey?(input: Input): PasskeyAnswer | undefined;
  /** What must happen after the success is recorded and before the session starts (a password change). */
  beforeSession?(account: SignInAccount, input: Input, evidence: Evidence, req: Request, sessionId: string): Promise<void>;
  /** How a failure (its row already written) reaches the caller: a problem, a challenge, a redirect. */
  refusal(failure: SignInFailure): Error;
  /**
   * For a scheme that must answer every error the same way (a redirect: a browser coming back from the
   * provider cannot read a 503), the failure an unexpected error becomes; its row is then best-effort.
   */
  unexpected?(error: unknown, createdUser: string | null): SignInFailure;
}

/** A sign-in that went through. */
export type SignInResult<Evidence> =
  | { kind: 'signedIn'; issued: IssuedToken; account: SignInAccount; evidence: Evidence }
  | { kind: 'mfaRequired'; evidence: Evidence; passkey?: PasskeyPrompt };
