import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasswordHasher } from './password-hasher.service';
import { REGISTRY_ENTITIES } from './registry.entities';
import { SeedService } from './seed.service';
import { UserAccounts } from './user-accounts.service';

/** Tenants, roles, permissions, users and API keys: the registry. */
@Module({
  imports: [TypeOrmModule.forFeature(REGISTRY_ENTITIES)],
  providers: [PasswordHasher, SeedService, UserAccounts],
  exports: [PasswordHasher, UserAccounts, TypeOrmModule],
})
export class UsersModule {}
