import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** Tables of contract 6, by the contract's names. */
@Entity({ name: 'TenantRegistry' })
export class TenantRegistry {
  @PrimaryGeneratedColumn({ name: 'Id' }) id!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Landlord', type: 'boolean', default: false }) landlord!: boolean;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
}

@Entity({ name: 'PermissionSpecification' })
export class PermissionSpecification {
  @PrimaryColumn({ name: 'Id', type: 'integer' }) id!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
}

@Entity({ name: 'RoleRegistry' })
export class RoleRegistry {
  @PrimaryGeneratedColumn({ name: 'Id' }) id!: number;
  @Column({ name: 'TenantRegistryId', type: 'integer' }) tenantRegistryId!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
}

@Entity({ name: 'RoleRegistryPermission' })
export class RoleRegistryPermission {
  @PrimaryColumn({ name: 'RoleRegistryId', type: 'integer' }) roleRegistryId!: number;
  @PrimaryColumn({ name: 'PermissionSpecificationId', type: 'integer' }) permissionSpecificationId!: number;
}

@Entity({ name: 'UserRegistry' })
export class UserRegistry {
  @PrimaryGeneratedColumn({ name: 'Id' }) id!: number;
  @Column({ name: 'RoleRegistryId', type: 'integer' }) roleRegistryId!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Email', type: 'varchar', length: 256, nullable: true }) email!: string | null;
  /** Argon2id PHC string; never leaves the service. */
  @Column({ name: 'Password', type: 'text', nullable: true, select: false }) password!: string | null;
  @Column({ name: 'PasswordExpiryDate', type: 'timestamptz', nullable: true }) passwordExpiryDate!: Date | null;
  @Column({ name: 'PasswordCreatedDate', type: 'timestamptz', nullable: true }) passwordCreatedDate!: Date | null;
  @Column({ name: 'FailedPasswordCount', type: 'integer', default: 0 }) failedPasswordCount!: number;
  @Column({ name: 'PasswordLocked', type: 'boolean', default: false }) passwordLocked!: boolean;
  @Column({ name: 'PasswordLockedDate', type: 'timestamptz', nullable: true }) passwordLockedDate!: Date | null;
  @Column({ name: 'LastLoginDate', type: 'timestamptz', nullable: true }) lastLoginDate!: Date | null;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
  @Column({ name: 'Deleted', type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'TokensValidFrom', type: 'timestamptz', nullable: true }) tokensValidFrom!: Date | null;
  @Column({ name: 'WirePasswordHash', type: 'boolean', default: false }) wirePasswordHash!: boolean;
  @Column({ name: 'CreatedDate', type: 'timestamptz' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
}

@Entity({ name: 'UserRegistryApiKey' })
export class UserRegistryApiKey {
  @PrimaryGeneratedColumn({ name: 'Id' }) id!: number;
  @Column({ name: 'UserRegistryId', type: 'integer' }) userRegistryId!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Description', type: 'varchar', length: 1024, nullable: true }) description!: string | null;
  /** Lowercase hex SHA-256 of the key; the clear value is never stored. */
  @Column({ name: 'ApiKey', type: 'char', length: 64 }) apiKey!: string;
  @Column({ name: 'ApiKeyDisplay', type: 'varchar', length: 8 }) apiKeyDisplay!: string;
  @Column({ name: 'CreatedDate', type: 'timestamptz' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
  @Column({ name: 'LastUsedDate', type: 'timestamptz', nullable: true }) lastUsedDate!: Date | null;
  @Column({ name: 'Deleted', type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'DeletedDate', type: 'timestamptz', nullable: true }) deletedDate!: Date | null;
  @Column({ name: 'DeletedUser', type: 'varchar', length: 256, nullable: true }) deletedUser!: string | null;
}

export const REGISTRY_ENTITIES = [
  TenantRegistry,
  PermissionSpecification,
  RoleRegistry,
  RoleRegistryPermission,
  UserRegistry,
  UserRegistryApiKey,
];
