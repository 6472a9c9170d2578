import { Injectable } from '@nestjs/common';
import { unauthorized } from '../common/problem';
import { Principal } from './principal';

/** The outward reason of every API key failure (service.md 5.1.6). */
export const KEY_NOT_FOUND = 'Key Not Found';

/**
 * Validates the x-api-key header. The sessions feature binds the real validator (in-memory set of
 * active keys); this default refuses every key, which is the fail-closed behaviour with no key store.
 */
@Injectable()
export class ApiKeyValidator {
  async validate(_key: string): Promise<Principal> {
    throw unauthorized(KEY_NOT_FOUND);
  }
}
