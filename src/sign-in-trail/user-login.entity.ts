import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { AuthenticationTypeId, FailureTypeId } from './audit.types';

/**
 * One sign-in attempt (contract 9), written before the answer. No foreign keys: the trail outlives
 * the users and tenants it names. The date-ordered and trigram indexes are DESC or GIN, which TypeORM
 * cannot describe; the migrations own them.
 */
@Entity({ name: 'UserLogin' })
@Index('IX_UserLogin_CreatedDate', { synchronize: false })
@Index('IX_UserLogin_Tenant_CreatedDate', { synchronize: false })
@Index('IX_UserLogin_SearchText_Trgm', { synchronize: false })
export class UserLogin {
  /** bigint: the driver returns it as a string. */
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'UserLogin_pkey' })
  id!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionAudit). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'UserLogin_pkey' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
  @Column({ name: 'UserRegistryId', type: 'integer', nullable: true }) userRegistryId!: number | null;
  @Column({ name: 'TenantRegistryId', type: 'integer', nullable: true }) tenantRegistryId!: number | null;
  @Column({ name: 'AuthenticationTypeId', type: 'smallint', default: 1 }) authenticationTypeId!: AuthenticationTypeId;
  @Column({ name: 'Failed', type: 'boolean', default: false }) failed!: boolean;
  @Column({ name: 'FailureTypeId', type: 'smallint', nullable: true }) failureTypeId!: FailureTypeId | null;
  @Column({ name: 'FailureMessage', type: 'varchar', length: 2048, nullable: true }) failureMessage!: string | null;
  @Column({ name: 'RemoteIp', type: 'varchar', length: 64, nullable: true }) remoteIp!: string | null;
  @Column({ name: 'LocalIp', type: 'varchar', length: 64, nullable: true }) localIp!: string | null;
  @Column({ name: 'UserAgent', type: 'varchar', length: 512, nullable: true }) userAgent!: string | null;
  /**
   * lower() of the searched columns joined by U+001F, kept by a trigger (migration AuditSearchText):
   * what `search` matches. Never written or read through the entity.
   */
  @Column({ name: 'SearchText', type: 'text', nullable: true, insert: false, update: false, select: false }) searchText!: string | null;
}
