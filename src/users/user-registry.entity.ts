import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { RoleRegistry } from './role-registry.entity';

/**
 * A user (contract 6). Names are unique case-insensitively among users that are not deleted (a partial
 * expression index the migration owns).
 */
@Entity({ name: 'UserRegistry' })
// Every row in the table itself, none in a table inheriting from it (which no trigger of this one sees): migration NoInheritedRows.
@Check('UserRegistry_OwnRows', `tableoid = '"UserRegistry"'::regclass`)
@Index('UX_UserRegistry_Name', { synchronize: false })
export class UserRegistry {
  @PrimaryGeneratedColumn('identity', { name: 'Id', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'UserRegistry_pkey' })
  id!: number;
  @Column({ name: 'RoleRegistryId', type: 'integer' })
  @ForeignKey(() => RoleRegistry, { name: 'UserRegistry_RoleRegistryId_fkey' })
  @Index('IX_UserRegistry_Role')
  roleRegistryId!: number;
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
  /** Every token issued before this instant is refused (revocation, password change). */
  @Column({ name: 'TokensValidFrom', type: 'timestamptz', nullable: true }) tokensValidFrom!: Date | null;
  /** The client sends a wire hash of the password rather than the password (contract 3). */
  @Column({ name: 'WirePasswordHash', type: 'boolean', default: false }) wirePasswordHash!: boolean;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
}
