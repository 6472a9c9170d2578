import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import { LogoutOutcomeId, LogoutReasonId } from './audit.types';

/**
 * One session cut (contract 9), written before the answer. No foreign keys: the trail outlives the
 * users and tenants it names. DESC and GIN indexes are owned by the migrations (TypeORM cannot
 * describe them).
 */
@Entity({ name: 'UserLogout' })
@Index('IX_UserLogout_CreatedDate', { synchronize: false })
@Index('IX_UserLogout_Tenant_CreatedDate', { synchronize: false })
@Index('IX_UserLogout_SearchText_Trgm', { synchronize: false })
export class UserLogout {
  /** bigint: the driver returns it as a string. */
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'UserLogout_pkey' })
  id!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionAudit). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'UserLogout_pkey' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
  @Column({ name: 'UserRegistryId', type: 'integer', nullable: true }) userRegistryId!: number | null;
  @Column({ name: 'TenantRegistryId', type: 'integer', nullable: true }) tenantRegistryId!: number | null;
  @Column({ name: 'ReasonId', type: 'smallint', default: 1 }) reasonId!: LogoutReasonId;
  @Column({ name: 'OutcomeId', type: 'smallint', default: 1 }) outcomeId!: LogoutOutcomeId;
  @Column({ name: 'RemoteIp', type: 'varchar', length: 64, nullable: true }) remoteIp!: string | null;
  @Column({ name: 'LocalIp', type: 'varchar', length: 64, nullable: true }) localIp!: string | null;
  @Column({ name: 'UserAgent', type: 'varchar', length: 512, nullable: true }) userAgent!: string | null;
  @Column({ name: 'SessionStartDate', type: 'timestamptz', nullable: true }) sessionStartDate!: Date | null;
  @Column({ name: 'CutByUser', type: 'varchar', length: 256, nullable: true }) cutByUser!: string | null;
  @Column({ name: 'Message', type: 'varchar', length: 512, nullable: true }) message!: string | null;
  /**
   * lower() of the searched columns joined by U+001F, kept by a trigger (migration AuditSearchText):
   * what `search` matches. Never written or read through the entity.
   */
  @Column({ name: 'SearchText', type: 'text', nullable: true, insert: false, update: false, select: false }) searchText!: string | null;
}
