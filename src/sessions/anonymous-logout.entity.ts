import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * When a client address last had a logout row written without a session (contract 13, the
 * once-a-minute rule), the database's copy shared by every node when no Redis is configured.
 */
@Entity({ name: 'AnonymousLogout' })
export class AnonymousLogoutEntry {
  /** The client address (an IPv6 address by its /64 prefix). */
  @PrimaryColumn({ name: 'Address', type: 'varchar', length: 64, primaryKeyConstraintName: 'AnonymousLogout_pkey' }) address!: string;
  @Column({ name: 'LastRowDate', type: 'timestamptz' }) lastRowDate!: Date;
}
