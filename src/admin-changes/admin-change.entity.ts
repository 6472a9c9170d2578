import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One administrative change (contract 18), written in the change's own transaction, or by the
 * registry triggers for a change made in the database (migration AdminChange). Sealed like UserLogin;
 * append-only; partitioned by month of CreatedDate. No foreign keys: the record outlives what it names.
 */
@Entity({ name: 'AdminChange' })
@Index('IX_AdminChange_CreatedDate', { synchronize: false })
@Index('IX_AdminChange_Tenant_CreatedDate', { synchronize: false })
@Index('IX_AdminChange_TargetTenant_CreatedDate', { synchronize: false })
@Index('IX_AdminChange_Target_CreatedDate', { synchronize: false })
@Index('IX_AdminChange_SearchText_Trgm', { synchronize: false })
export class AdminChange {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'AdminChange_pkey' })
  id!: string;
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'AdminChange_pkey' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
  @Column({ name: 'UserRegistryId', type: 'integer', nullable: true }) userRegistryId!: number | null;
  @Column({ name: 'TenantRegistryId', type: 'integer', nullable: true }) tenantRegistryId!: number | null;
  @Column({ name: 'CredentialTypeId', type: 'smallint' }) credentialTypeId!: number;
  @Column({ name: 'CredentialId', type: 'varchar', length: 64, nullable: true }) credentialId!: string | null;
  @Column({ name: 'ActionTypeId', type: 'smallint' }) actionTypeId!: number;
  @Column({ name: 'TargetTable', type: 'varchar', length: 32 }) targetTable!: string;
  @Column({ name: 'TargetId', type: 'bigint', nullable: true }) targetId!: string | null;
  @Column({ name: 'TargetName', type: 'varchar', length: 256, nullable: true }) targetName!: string | null;
  @Column({ name: 'TargetTenantRegistryId', type: 'integer', nullable: true }) targetTenantRegistryId!: number | null;
  @Column({ name: 'Failed', type: 'boolean', default: false }) failed!: boolean;
  @Column({ name: 'Changes', type: 'text' }) changes!: string;
  @Column({ name: 'RemoteIp', type: 'varchar', length: 64, nullable: true }) remoteIp!: string | null;
  @Column({ name: 'LocalIp', type: 'varchar', length: 64, nullable: true }) localIp!: string | null;
  @Column({ name: 'UserAgent', type: 'varchar', length: 512, nullable: true }) userAgent!: string | null;
  /** lower() of CreatedUser, TargetName and Changes joined by U+001F, kept by a trigger (migration AdminChangeSearchText); not in the canonical form. */
  @Column({ name: 'SearchText', type: 'text', nullable: true, insert: false, update: false, select: false }) searchText!: string | null;
}
