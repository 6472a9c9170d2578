import { Module } from '@nestjs/common';
import { PasswordTransport } from '../users/password-transport';
import { SessionsModule } from '../sessions/sessions.module';
import { PasswordHasher } from '../users/password-hasher.service';
import { RegistryTablesModule } from '../users/registry-tables.module';
import { PermissionSpecificationController, RoleRegistryController } from './role-registry.controller';
import { RoleRegistryService } from './role-registry.service';
import { SeedService } from '../users/seed.service';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { TenantRegistryController } from './tenant-registry.controller';
import { TenantRegistryService } from './tenant-registry.service';
import { UserAccounts } from '../users/user-accounts.service';
import { UserRegistryController } from './user-registry.controller';
import { UserRegistryService } from './user-registry.service';

/** Tenants, roles, permissions, users and API keys: the registry. */
@Module({
  imports: [RegistryTablesModule, SessionsModule],
  controllers: [TenantRegistryController, RoleRegistryController, PermissionSpecificationController, UserRegistryController],
  providers: [
    PasswordHasher,
    SeedService,
    UserAccounts,
    ServiceChangePublisher,
    TenantRegistryService,
    RoleRegistryService,
    UserRegistryService,
    // Admin password fields travel under the same RSA-OAEP transport as sign-in (contract 3).
    PasswordTransport,
  ],
  exports: [
    PasswordHasher,
    UserAccounts,
    ServiceChangePublisher,
    RoleRegistryService,
    PasswordTransport,
    RegistryTablesModule,
  ],
})
export class UsersModule {}
