import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PermissionSpecification } from './permission-specification.entity';
import { PermissionSpecificationRepository } from './permission-specification.repository';
import { RoleRegistryPermission } from './role-registry-permission.entity';
import { RoleRegistryPermissionRepository } from './role-registry-permission.repository';
import { RoleRegistry } from './role-registry.entity';
import { RoleRegistryRepository } from './role-registry.repository';
import { TargetUsers } from './target-users';
import { TenantRegistry } from './tenant-registry.entity';
import { TenantRegistryRepository } from './tenant-registry.repository';
import { UserRegistry } from './user-registry.entity';
import { UserRegistryRepository } from './user-registry.repository';

const PROVIDED = [
  TenantRegistryRepository,
  PermissionSpecificationRepository,
  RoleRegistryRepository,
  RoleRegistryPermissionRepository,
  UserRegistryRepository,
  TargetUsers,
];

/**
 * The registry's tables (contract 6): entities, their repositories, and TargetUsers (which user an
 * administrator may act on). A module of its own with no dependency but TypeORM, so that the guard
 * (guard/: the per-request user read), session-store/ (revocation), sessions/ (RevokeTokens) and api-keys/ can use them
 * without importing UsersModule, which itself imports SessionsModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([TenantRegistry, PermissionSpecification, RoleRegistry, RoleRegistryPermission, UserRegistry])],
  providers: PROVIDED,
  exports: PROVIDED,
})
export class RegistryTablesModule {}
