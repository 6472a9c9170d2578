// The browser's half of the WebAuthn ceremonies (contract 20), with the standard JSON forms only:
// PublicKeyCredential.parseCreationOptionsFromJSON / parseRequestOptionsFromJSON take the server's
// options as sent, and credential.toJSON() gives what the server's library verifies. No bundler, no
// library, nothing that parses CBOR here.

/** True when this browser can use passkeys with the JSON forms. */
export function passkeysSupported() {
  return (
    typeof window.PublicKeyCredential === 'function' &&
    typeof PublicKeyCredential.parseCreationOptionsFromJSON === 'function' &&
    typeof PublicKeyCredential.parseRequestOptionsFromJSON === 'function'
  );
}

/** True when the browser offers passkeys in the user name field's autofill (conditional mediation). */
export async function autofillSupported() {
  return passkeysSupported() && typeof PublicKeyCredential.isConditionalMediationAvailable === 'function' && (await PublicKeyCredential.isConditionalMediationAvailable());
}

/**
 * Creates a passkey from the server's creation options; what to post back (RegistrationResponseJSON).
 * @param {PublicKeyCredentialCreationOptionsJSON} options
 * @returns {Promise<RegistrationResponseJSON>}
 */
export async function createPasskey(options) {
  const credential = await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) });
  // With `publicKey`, what resolves is a PublicKeyCredential, whose JSON is a registration's.
  return /** @type {RegistrationResponseJSON} */ (/** @type {PublicKeyCredential} */ (credential).toJSON());
}

/**
 * Asks for an assertion answering the server's request options: with `conditional`, quietly, offered
 * in the autofill of an `autocomplete="… webauthn"` field until the user picks one (or `signal` aborts).
 * @param {PublicKeyCredentialRequestOptionsJSON} options
 * @param {{ conditional?: boolean, signal?: AbortSignal }} [ceremony]
 * @returns {Promise<AuthenticationResponseJSON>}
 */
export async function getPasskey(options, { conditional = false, signal } = {}) {
  /** @type {CredentialRequestOptions} */
  const request = { publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options), signal };
  if (conditional) request.mediation = 'conditional';
  const credential = await navigator.credentials.get(request);
  return /** @type {AuthenticationResponseJSON} */ (/** @type {PublicKeyCredential} */ (credential).toJSON());
}

/** A browser refusal the user caused (cancelled, timed out, nothing chosen), as opposed to a fault. @param {unknown} error */
export function cancelled(error) {
  const refusal = /** @type {{ name?: unknown } | null | undefined} */ (error);
  return refusal?.name === 'NotAllowedError' || refusal?.name === 'AbortError';
}
