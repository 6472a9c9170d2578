import { Injectable } from '@nestjs/common';
import { unauthorized } from '../common/problem';
import { Principal } from './principal';

/** The outward reason of every API key failure (service.md 5.1.6). */
export const KEY_NOT_FOUND = 'Key Not Found';

/**
 * Validates the x-api-key header; the injection token of the validator. The global ApiKeysModule
 * binds it to ActiveApiKeyValidator (the in-memory set of active keys); this base refuses every key,
 * the fail-closed behaviour of a build without a key store.
 */
@Injectable()
export class ApiKeyValidator {
  /** `userAgent`: the request's User-Agent header as sent (raw), recorded with the key's use. */
  async validate(_key: string, _userAgent: string | null = null): Promise<Principal> {
    throw unauthorized(KEY_NOT_FOUND);
  }
}
