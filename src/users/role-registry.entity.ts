import { Column, Entity, ForeignKey, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { PermissionSpecification } from './permission-specification.entity';
import { TenantRegistry } from './tenant-registry.entity';

/** A role of one tenant (contract 6). Names are unique per tenant case-insensitively (expression index). */
@Entity({ name: 'RoleRegistry' })
@Index('UX_RoleRegistry_Tenant_Name', { synchronize: false })
export class RoleRegistry {
  @PrimaryGeneratedColumn('identity', { name: 'Id', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'RoleRegistry_pkey' })
  id!: number;
  @Column({ name: 'TenantRegistryId', type: 'integer' })
  @ForeignKey(() => TenantRegistry, { name: 'RoleRegistry_TenantRegistryId_fkey' })
  tenantRegistryId!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
}

/** One permission granted by one role; the grants go with the role when it is deleted. */
@Entity({ name: 'RoleRegistryPermission' })
export class RoleRegistryPermission {
  @PrimaryColumn({ name: 'RoleRegistryId', type: 'integer', primaryKeyConstraintName: 'RoleRegistryPermission_pkey' })
  @ForeignKey(() => RoleRegistry, { name: 'RoleRegistryPermission_RoleRegistryId_fkey', onDelete: 'CASCADE' })
  roleRegistryId!: number;
  @PrimaryColumn({ name: 'PermissionSpecificationId', type: 'integer', primaryKeyConstraintName: 'RoleRegistryPermission_pkey' })
  @ForeignKey(() => PermissionSpecification, { name: 'RoleRegistryPermission_PermissionSpecificationId_fkey' })
  permissionSpecificationId!: number;
}
