import { Check, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { PermissionSpecification } from './permission-specification.entity';
import { RoleRegistry } from './role-registry.entity';

/** One permission granted by one role; the grants go with the role when it is deleted. */
@Entity({ name: 'RoleRegistryPermission' })
// Every row in the table itself, none in a table inheriting from it (which no trigger of this one sees): migration NoInheritedRows.
@Check('RoleRegistryPermission_OwnRows', `tableoid = '"RoleRegistryPermission"'::regclass`)
export class RoleRegistryPermission {
  @PrimaryColumn({ name: 'RoleRegistryId', type: 'integer', primaryKeyConstraintName: 'RoleRegistryPermission_pkey' })
  @ForeignKey(() => RoleRegistry, { name: 'RoleRegistryPermission_RoleRegistryId_fkey', onDelete: 'CASCADE' })
  roleRegistryId!: number;
  @PrimaryColumn({ name: 'PermissionSpecificationId', type: 'integer', primaryKeyConstraintName: 'RoleRegistryPermission_pkey' })
  @ForeignKey(() => PermissionSpecification, { name: 'RoleRegistryPermission_PermissionSpecificationId_fkey' })
  permissionSpecificationId!: number;
}
