import { Principal } from '../access/principal';

/** The outward reason of every API key failure (service.md 5.1.6). */
export const KEY_NOT_FOUND = 'Key Not Found';

/**
 * Validates the x-api-key header; the injection token of the validator. The global ApiKeysModule
 * binds it to ActiveApiKeyValidator (the in-memory set of active keys). Abstract, so that a build
 * without a key store does not start (Nest cannot resolve the token) instead of silently refusing keys.
 */
export abstract class ApiKeyValidator {
  /** The key's principal, or throws the 401 problem `KEY_NOT_FOUND` (fail closed). `userAgent`: the
   *  request's User-Agent header as sent (raw), recorded with the key's use. */
  abstract validate(key: string, userAgent?: string | null): Promise<Principal>;
}
