import { Check, Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { UserRegistry } from '../users/user-registry.entity';

/** An API key of one user (contract 6); rows are soft-deleted so the trail of who revoked what stays. */
@Entity({ name: 'UserRegistryApiKey' })
// Every row in the table itself, none in a table inheriting from it (which no trigger of this one sees): migration NoInheritedRows.
@Check('UserRegistryApiKey_OwnRows', `tableoid = '"UserRegistryApiKey"'::regclass`)
export class UserRegistryApiKey {
  @PrimaryGeneratedColumn('identity', { name: 'Id', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'UserRegistryApiKey_pkey' })
  id!: number;
  @Column({ name: 'UserRegistryId', type: 'integer' })
  @ForeignKey(() => UserRegistry, { name: 'UserRegistryApiKey_UserRegistryId_fkey' })
  @Index('IX_UserRegistryApiKey_User')
  userRegistryId!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  @Column({ name: 'Description', type: 'varchar', length: 1024, nullable: true }) description!: string | null;
  /** Lowercase hex SHA-256 of the key; the clear value is never stored. */
  @Column({ name: 'ApiKey', type: 'char', length: 64 })
  @Index('UX_UserRegistryApiKey_ApiKey', { unique: true })
  apiKey!: string;
  @Column({ name: 'ApiKeyDisplay', type: 'varchar', length: 8 }) apiKeyDisplay!: string;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
  @Column({ name: 'LastUsedDate', type: 'timestamptz', nullable: true }) lastUsedDate!: Date | null;
  /** The User-Agent of the use LastUsedDate records; bounded and stripped of control characters. */
  @Column({ name: 'LastUsedUserAgent', type: 'varchar', length: 512, nullable: true }) lastUsedUserAgent!: string | null;
  @Column({ name: 'Deleted', type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'DeletedDate', type: 'timestamptz', nullable: true }) deletedDate!: Date | null;
  @Column({ name: 'DeletedUser', type: 'varchar', length: 256, nullable: true }) deletedUser!: string | null;
}
