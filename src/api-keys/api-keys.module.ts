import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { UsersModule } from '../user-admin/users.module';
import { ApiKeyValidator } from '../guard/api-key.validator';
import { ActiveApiKeyValidator } from './active-api-key.validator';
import { ActiveApiKeys } from './active-api-keys';
import { ApiKeyUsageWriter } from './api-key-usage.writer';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysScheduler } from './api-keys.scheduler';
import { ApiKeys } from './api-keys.service';
import { UserRegistryApiKey } from './user-registry-api-key.entity';
import { UserRegistryApiKeyRepository } from './user-registry-api-key.repository';

/**
 * API keys: generation, the in-memory set of active keys shared across nodes through the bus, and
 * the validator the global guard uses for x-api-key (bound to the ApiKeyValidator token here, so the
 * auth feature does not depend on this one).
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserRegistryApiKey]), UsersModule],
  controllers: [ApiKeysController],
  providers: [
    UserRegistryApiKeyRepository,
    ActiveApiKeys,
    ApiKeyUsageWriter,
    ApiKeysScheduler,
    ActiveApiKeyValidator,
    { provide: ApiKeyValidator, useExisting: ActiveApiKeyValidator },
    ApiKeys,
  ],
  exports: [ApiKeyValidator, ActiveApiKeys],
})
export class ApiKeysModule {}
