import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { TenantRegistry } from './tenant-registry.entity';

/** A role of one tenant (contract 6). Names are unique per tenant case-insensitively (expression index). */
@Entity({ name: 'RoleRegistry' })
// Every row in the table itself, none in a table inheriting from it (which no trigger of this one sees): migration NoInheritedRows.
@Check('RoleRegistry_OwnRows', `tableoid = '"RoleRegistry"'::regclass`)
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
