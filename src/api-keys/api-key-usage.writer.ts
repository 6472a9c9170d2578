import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { LastUse, LastUseWriter } from '../common/last-use-writer';
import { UserRegistryApiKeyRepository } from './user-registry-api-key.repository';

/**
 * Records when each API key was last used, and by which user agent, at most once a minute per key and
 * off the request path (contract 5); the noting and flushing are LastUseWriter's.
 */
@Injectable()
export class ApiKeyUsageWriter extends LastUseWriter {
  constructor(
    private readonly apiKeys: UserRegistryApiKeyRepository,
    clock: Clock,
  ) {
    super(clock, new Logger('ApiKeyUsageWriter'));
  }

  protected write(uses: Map<number, LastUse>): Promise<void> {
    return this.apiKeys.recordLastUsed(uses);
  }
}
