/** AuthenticationTypeId (service.md 2.3). */
export enum AuthenticationTypeId {
  UserNamePassword = 1,
  Negotiate = 2,
  OAuth = 3,
  /** Contract 20: a WebAuthn assertion of a discoverable credential. */
  Passkey = 4,
}

/** FailureTypeId (service.md 2.3, plus 11 from contract 7). */
export enum FailureTypeId {
  NoUser = 1,
  NotActive = 2,
  PasswordLocked = 3,
  PasswordExpired = 4,
  PasswordMismatch = 5,
  NoPassword = 6,
  NoIdentityClaim = 7,
  RemoteFailure = 8,
  LocalValidationFailure = 9,
  InternalError = 10,
  SecondFactorRejected = 11,
  /** Contract 13: refused unverified, the client address is past SignInThrottle. */
  Throttled = 12,
  /** Contract 20: no active passkey has the credential id the assertion names. */
  UnknownPasskey = 13,
  /** Contract 20: the assertion does not verify (signature, challenge, origin or relying party). */
  PasskeyAssertionInvalid = 14,
  /** Contract 20: refused by policy (user verification missing, a synced credential where refused, a counter gone back). */
  PasskeyPolicy = 15,
}

export const AUTHENTICATION_TYPE_NAMES: Record<number, string> = {
  1: 'Username and Password',
  2: 'Negotiate',
  3: 'OAuth / OpenID Connect',
  4: 'Passkey',
};

export const FAILURE_TYPE_NAMES: Record<number, string> = {
  1: 'No user registry entry matches the supplied username',
  2: 'User registry entry is not Active',
  3: 'User registry entry is Password Locked',
  4: 'Password expired and no new password supplied',
  5: 'Password did not match',
  6: 'No password supplied',
  7: 'Identity provider ticket had no usable identity claim',
  8: 'Remote or identity-provider failure',
  9: 'Local authentication or token validation failed',
  10: 'Internal error while processing the ticket',
  11: 'Second factor rejected',
  12: 'Throttled',
  13: 'No active passkey has this credential',
  14: 'Passkey assertion did not verify',
  15: 'Passkey refused by policy',
};

/**
 * What a failure reason means where its name does not say it: shown under the reason on the User Login
 * page only (the API's failureReason stays the name), kept here beside the code it explains.
 */
export const FAILURE_TYPE_NOTES: Record<number, string> = {
  [FailureTypeId.PasswordExpired]:
    'Expected, not an attack: a new, reset or expired password must be changed, and this attempt did not yet bring an acceptable new one (the sign-in page then asks for it).',
  [FailureTypeId.Throttled]: 'Too many failed sign-ins from this address recently (SignInThrottle): refused without checking the password.',
};

/** ReasonId of UserLogout (service.md 2.4). */
export enum LogoutReasonId {
  UserLogout = 1,
  AdministratorRevoked = 2,
  PasswordChanged = 3,
  /** One session ended on its own, by its user or an administrator (contract 14). */
  SessionEnded = 4,
}

/** OutcomeId of UserLogout (service.md 2.4). */
export enum LogoutOutcomeId {
  Revoked = 1,
  NoSession = 2,
  RevocationFailed = 3,
}

export const LOGOUT_REASON_NAMES: Record<number, string> = {
  1: 'The user logged out',
  2: 'An administrator revoked the sessions',
  3: 'A password change revoked the sessions',
  4: 'One session was ended',
};

export const LOGOUT_OUTCOME_NAMES: Record<number, string> = {
  1: 'Revoked',
  2: 'No session; cookies cleared',
  3: 'Revocation failed',
};
