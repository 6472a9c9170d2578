import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ApiKeyValidator, KEY_NOT_FOUND } from '../guard/api-key.validator';
import { Principal } from '../access/principal';
import { mayAuthenticate, principalOf, UserState, UserStateReader } from '../guard/user-state.reader';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { serviceUnavailable, unauthorized } from '../common/problem';
import { AppSettings, SETTINGS } from '../config/config.module';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { ActiveApiKeys } from './active-api-keys';
import { API_KEY_MAX_LENGTH, apiKeyHash, verifyApiKey } from './api-key.format';
import { ApiKeyUsageWriter } from './api-key-usage.writer';

/**
 * How long the state of a key's owner may be reused without reading it again. API keys are the
 * integration path and are validated in memory (contract 5); this bound keeps an owner's changes
 * made outside the registry (or lost with the bus) effective within a second, and a database that
 * stops answering refuses keys within a second (fail closed).
 */
export const KEY_OWNER_STATE_TTL_MS = 1000;

/** How many keys whose checksum verified are remembered (by SHA-256), so a key is decoded once. */
const VERIFIED_KEYS_MAX = 10_000;

/**
 * The real x-api-key validator (contract 5): decode, version, constant-time checksum, then the
 * in-memory set of active keys. The owner's state (active, deleted, locked, tenant, permissions) is
 * read from the database at most once a second per user, and forgotten at once on any registry
 * change (this node's, or another's through the ServiceChange channel) and on every session end;
 * a failed read refuses the request (503). Every failure has the one outward reason "Key Not Found".
 * The key itself is never logged.
 */
@Injectable()
export class ActiveApiKeyValidator extends ApiKeyValidator implements OnModuleDestroy {
  private readonly logger = new Logger('ApiKeyValidator');
  private readonly owners = new Map<number, { state: UserState | null; readAtMs: number }>();
  /**
   * SHA-256 of keys whose checksum already verified, with the user name they carry. Verification is
   * a pure function of the key, so its outcome is reused (the base62 decode and HMAC are most of a
   * key's cost); the clear key is never kept, only its hash, as in the active set.
   */
  private readonly verified = new Map<string, { userName: string }>();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    private readonly active: ActiveApiKeys,
    private readonly users: UserStateReader,
    private readonly usage: ApiKeyUsageWriter,
    private readonly clock: Clock,
    bus: Bus,
    changes: ServiceChangePublisher,
    @Inject(SETTINGS) private readonly settings: AppSettings,
  ) {
    super();
    const forget = () => this.owners.clear();
    this.unsubscribe = [
      changes.onLocalChange(forget),
      bus.subscribe(CHANNELS.serviceChange, forget),
      bus.subscribe(CHANNELS.sessionEnded, forget),
      bus.onReady(forget),
    ];
  }

  onModuleDestroy(): void {
    for (const off of this.unsubscribe) off();
  }

  /** Decode, version and constant-time checksum (contract 5); remembers a key that passes. */
  private verify(key: string, hash: string): { userName: string } | null {
    const claimed = verifyApiKey(key, this.settings.apiHmacKey);
    if (!claimed) return null;
    if (this.verified.size >= VERIFIED_KEYS_MAX) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(hash, claimed);
    return claimed;
  }

  /** The owner's state, reused for at most KEY_OWNER_STATE_TTL_MS; throws 503 when it cannot be read. */
  private async ownerState(userRegistryId: number, display: string): Promise<UserState | null> {
    const now = this.clock.nowMs();
    const cached = this.owners.get(userRegistryId);
    if (cached && now - cached.readAtMs < KEY_OWNER_STATE_TTL_MS && now >= cached.readAtMs) return cached.state;
    try {
      const state = await this.users.read(userRegistryId);
      this.owners.set(userRegistryId, { state, readAtMs: now });
      return state;
    } catch (error) {
      this.owners.delete(userRegistryId);
      this.logger.warn(`user row read failed for an API key, refusing the request: ${(error as Error).message}`);
      throw serviceUnavailable();
    }
  }

  override async validate(key: string, userAgent: string | null = null): Promise<Principal> {
    if (key.length === 0 || key.length > API_KEY_MAX_LENGTH) throw unauthorized(KEY_NOT_FOUND);
    const hash = apiKeyHash(key);
    const claimed = this.verified.get(hash) ?? this.verify(key, hash);
    if (!claimed) throw unauthorized(KEY_NOT_FOUND);
    await this.active.ensureFresh();
    const entry = this.active.get(hash);
    if (!entry) throw unauthorized(KEY_NOT_FOUND);
    const state = await this.ownerState(entry.userRegistryId, entry.display);
    if (!mayAuthenticate(state)) throw unauthorized(KEY_NOT_FOUND);
    // The key names its user; a row that points elsewhere is not this key's.
    if (state.name.toLowerCase() !== claimed.userName.toLowerCase()) throw unauthorized(KEY_NOT_FOUND);
    this.usage.touch(entry.keyId, userAgent);
    return principalOf(state, { authenticationType: 'ApiKey', sessionStartDate: null, sessionId: null, expiration: null, apiKeyDisplay: entry.display });
  }
}
