import { Column, Entity, ForeignKey, Index, PrimaryGeneratedColumn } from 'typeorm';
import { UserRegistry } from '../users/user-registry.entity';

/**
 * One WebAuthn credential of a user (contract 20). Soft-deleted, so what was registered and removed
 * stays; CredentialId stays unique even then, so a removed credential cannot come back under anyone.
 */
@Entity({ name: 'UserPasskey' })
export class UserPasskey {
  @PrimaryGeneratedColumn('identity', { name: 'Id', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'UserPasskey_pkey' })
  id!: number;
  @Column({ name: 'UserRegistryId', type: 'integer' })
  @ForeignKey(() => UserRegistry, { name: 'UserPasskey_UserRegistryId_fkey' })
  @Index('IX_UserPasskey_User')
  userRegistryId!: number;
  /** The authenticator's credential id (raw bytes; base64url on the wire). */
  @Column({ name: 'CredentialId', type: 'bytea' })
  @Index('UX_UserPasskey_CredentialId', { unique: true })
  credentialId!: Buffer;
  /** COSE public key as the authenticator gave it. */
  @Column({ name: 'PublicKey', type: 'bytea' }) publicKey!: Buffer;
  /** The highest signature counter seen; stays 0 for authenticators that never count (synced passkeys). */
  @Column({ name: 'SignCount', type: 'bigint', default: 0 }) signCount!: string;
  /** Comma list of the transports the browser reported (usb, nfc, ble, internal, hybrid). */
  @Column({ name: 'Transports', type: 'varchar', length: 128, nullable: true }) transports!: string | null;
  @Column({ name: 'Aaguid', type: 'uuid', nullable: true }) aaguid!: string | null;
  /** The credential may be synced to other devices (the BE flag). */
  @Column({ name: 'BackupEligible', type: 'boolean', default: false }) backupEligible!: boolean;
  /** It is synced now (the BS flag, as last seen). */
  @Column({ name: 'BackedUp', type: 'boolean', default: false }) backedUp!: boolean;
  @Column({ name: 'Name', type: 'varchar', length: 64 }) name!: string;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  /** Written at most once a minute per passkey, off the request path. */
  @Column({ name: 'LastUsedDate', type: 'timestamptz', nullable: true }) lastUsedDate!: Date | null;
  @Column({ name: 'LastUsedUserAgent', type: 'varchar', length: 512, nullable: true }) lastUsedUserAgent!: string | null;
  @Column({ name: 'Deleted', type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'DeletedDate', type: 'timestamptz', nullable: true }) deletedDate!: Date | null;
}
