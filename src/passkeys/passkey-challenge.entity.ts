import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** What a challenge was issued for; a challenge is accepted only by the ceremony of its purpose. */
export enum ChallengePurpose {
  /** A registration; the row's Id is the session's id, so a session holds one at a time. */
  Registration = 1,
  /** A passkey sign-in (discoverable credentials, no user known yet). */
  SignIn = 2,
  /** The second factor after a password, bound to that user. */
  SecondFactor = 3,
}

/**
 * A WebAuthn challenge (contract 20): 32 random bytes, valid 2 minutes, consumed by the one statement
 * that accepts it. In the database so every node accepts what another issued.
 */
@Entity({ name: 'PasskeyChallenge' })
export class PasskeyChallenge {
  @PrimaryColumn({ name: 'Id', type: 'uuid', primaryKeyConstraintName: 'PasskeyChallenge_pkey' }) id!: string;
  @Column({ name: 'Purpose', type: 'smallint' }) purpose!: ChallengePurpose;
  @Column({ name: 'Challenge', type: 'bytea' }) challenge!: Buffer;
  /** The user a second-factor challenge was issued to (null for the others). */
  @Column({ name: 'UserRegistryId', type: 'integer', nullable: true }) userRegistryId!: number | null;
  /** Who asked, to bound the live challenges per address. */
  @Column({ name: 'RemoteIp', type: 'varchar', length: 64, nullable: true })
  @Index('IX_PasskeyChallenge_RemoteIp')
  remoteIp!: string | null;
  @Column({ name: 'ExpiresDate', type: 'timestamptz' })
  @Index('IX_PasskeyChallenge_ExpiresDate')
  expiresDate!: Date;
}
