import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PasswordTransport } from './password-transport';
import { SessionsModule } from '../sessions/sessions.module';
import { PasswordHasher } from './password-hasher.service';
import { PermissionSpecification } from './permission-specification.entity';
import { PermissionSpecificationRepository } from './permission-specification.repository';
import { RoleRegistryPermission } from './role-registry-permission.entity';
import { RoleRegistryPermissionRepository } from './role-registry-permission.repository';
import { RoleRegistry } from './role-registry.entity';
import { RoleRegistryRepository } from './role-registry.repository';
import { TenantRegistry } from './tenant-registry.entity';
import { TenantRegistryRepository } from './tenant-registry.repository';
import { UserRegistry } from './user-registry.entity';
import { UserRegistryRepository } from './user-registry.repository';
import { PermissionSpecificationController, RoleRegistryController } from './role-registry.controller';
import { RoleRegistryService } from './role-registry.service';
import { SeedService } from './seed.service';
import { ServiceChangePublisher } from './service-change.publisher';
import { TenantRegistryController } from './tenant-registry.controller';
import { TenantRegistryService } from './tenant-registry.service';
import { UserAccounts } from './user-accounts.service';
import { UserRegistryController } from './user-registry.controller';
import { UserRegistryService } from './user-registry.service';

/** Tenants, roles, permissions, users and API keys: the registry. */
@Module({
  imports: [TypeOrmModule.forFeature([TenantRegistry, PermissionSpecification, RoleRegistry, RoleRegistryPermission, UserRegistry]), SessionsModule],
  controllers: [TenantRegistryController, RoleRegistryController, PermissionSpecificationController, UserRegistryController],
  providers: [
    TenantRegistryRepository,
    PermissionSpecificationRepository,
    RoleRegistryRepository,
    RoleRegistryPermissionRepository,
    UserRegistryRepository,
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
    UserRegistryRepository,
    PermissionSpecificationRepository,
    TypeOrmModule,
  ],
})
export class UsersModule {}
