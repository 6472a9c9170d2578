/**
 * The two ways a verification ends early. VerificationFailure (exit 1): the log, as served, is not
 * what was signed; its message names the first bad leaf or checkpoint. TransportError (exit 2): the
 * service could not be asked (network, HTTP status, an answer of the wrong shape), so nothing is
 * known about the log either way.
 */
export class VerificationFailure extends Error {
  override readonly name = 'VerificationFailure';
}

export class TransportError extends Error {
  override readonly name = 'TransportError';
}
