import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { TenantRegistry } from '../users/tenant-registry.entity';
import { UserRegistry } from '../users/user-registry.entity';

/**
 * One sign-in (contract 14), named by the `sid` claim of every JWT of that session. A row is open
 * while EndedDate is null; ending it (one session, or all of a user's) fills the three End columns.
 * Ended rows are deleted once older than SessionRetention; UserLogout keeps the permanent record.
 * The partial and DESC indexes are owned by the migration (TypeORM cannot describe them).
 */
@Entity({ name: 'UserSession' })
@Index('IX_UserSession_User_Open', { synchronize: false })
@Index('IX_UserSession_EndedDate', { synchronize: false })
@Index('IX_UserSession_Open_CreatedDate', { synchronize: false })
export class UserSession {
  /** A random UUID made by the service, so an id reveals nothing about how many sessions exist. */
  @PrimaryColumn({ name: 'Id', type: 'uuid', primaryKeyConstraintName: 'UserSession_pkey' }) id!: string;
  @Column({ name: 'UserRegistryId', type: 'integer' })
  @ForeignKey(() => UserRegistry, { name: 'UserSession_UserRegistryId_fkey' })
  userRegistryId!: number;
  @Column({ name: 'TenantRegistryId', type: 'integer', nullable: true })
  @ForeignKey(() => TenantRegistry, { name: 'UserSession_TenantRegistryId_fkey' })
  tenantRegistryId!: number | null;
  /** AuthenticationTypeId of service.md 2.3: the scheme that signed in. */
  @Column({ name: 'AuthenticationTypeId', type: 'smallint' }) authenticationTypeId!: number;
  /** The session start: the `sst` claim. */
  @Column({ name: 'CreatedDate', type: 'timestamptz' }) createdDate!: Date;
  /** Written at most once a minute, off the request path. */
  @Column({ name: 'LastSeenDate', type: 'timestamptz' }) lastSeenDate!: Date;
  @Column({ name: 'RemoteIp', type: 'varchar', length: 64, nullable: true }) remoteIp!: string | null;
  @Column({ name: 'UserAgent', type: 'varchar', length: 512, nullable: true }) userAgent!: string | null;
  @Column({ name: 'EndedDate', type: 'timestamptz', nullable: true }) endedDate!: Date | null;
  /** The UserLogout ReasonId of the end: 1 logout, 2 administrator, 3 password change, 4 this session alone. */
  @Column({ name: 'EndReasonId', type: 'smallint', nullable: true }) endReasonId!: number | null;
  /** The user name of whoever ended it (the user themself, or the administrator). */
  @Column({ name: 'EndedByUser', type: 'varchar', length: 256, nullable: true }) endedByUser!: string | null;
}
