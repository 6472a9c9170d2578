import { Inject, Injectable, Logger } from '@nestjs/common';
import { ApiKeyValidator, KEY_NOT_FOUND } from '../auth/api-key.validator';
import { Principal } from '../auth/principal';
import { UserState, UserStateReader } from '../auth/user-state.reader';
import { serviceUnavailable, unauthorized } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { ActiveApiKeys } from './active-api-keys';
import { apiKeyHash, verifyApiKey } from './api-key.format';
import { ApiKeyUsageWriter } from './api-key-usage.writer';

/**
 * The real x-api-key validator (contract 5): decode, version, constant-time checksum, then the
 * in-memory set of active keys; the user's state (active, deleted, locked, tenant, permissions) is
 * still read from the database on every request, and a failed read refuses the request (503).
 * Every failure has the one outward reason "Key Not Found". The key itself is never logged.
 */
@Injectable()
export class ActiveApiKeyValidator extends ApiKeyValidator {
  private readonly logger = new Logger('ApiKeyValidator');

  constructor(
    private readonly active: ActiveApiKeys,
    private readonly users: UserStateReader,
    private readonly usage: ApiKeyUsageWriter,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    super();
  }

  override async validate(key: string): Promise<Principal> {
    const claimed = verifyApiKey(key, this.settings.apiHmacKey);
    if (!claimed) throw unauthorized(KEY_NOT_FOUND);
    await this.active.ensureFresh();
    const entry = this.active.get(apiKeyHash(key));
    if (!entry) throw unauthorized(KEY_NOT_FOUND);
    let state: UserState | null;
    try {
      state = await this.users.read(entry.userRegistryId);
    } catch (error) {
      this.logger.error(`user row read failed for API key ${entry.display}, refusing: ${(error as Error).message}`);
      throw serviceUnavailable();
    }
    if (!state || state.deleted || !state.active || state.passwordLocked || !state.tenantActive) throw unauthorized(KEY_NOT_FOUND);
    // The key names its user; a row that points elsewhere is not this key's.
    if (state.name.toLowerCase() !== claimed.userName.toLowerCase()) throw unauthorized(KEY_NOT_FOUND);
    this.usage.touch(entry.keyId);
    return {
      userRegistryId: state.id,
      userName: state.name,
      tenantRegistryId: state.tenantRegistryId,
      tenantName: state.tenantName,
      landlord: state.landlord,
      permissions: state.permissions,
      authenticationType: 'ApiKey',
      sessionStartDate: null,
      expiration: null,
      absoluteExpiration: null,
      apiKeyDisplay: entry.display,
    };
  }
}
