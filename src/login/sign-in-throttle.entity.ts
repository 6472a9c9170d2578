import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Failed sign-ins of one client address in its current window (contract 13), the database's copy of
 * the count when no Redis is configured. The window starts at the address's first failure.
 */
@Entity({ name: 'SignInThrottle' })
export class SignInThrottleEntry {
  /** The client address (an IPv6 address is counted by its /64 prefix). */
  @PrimaryColumn({ name: 'Address', type: 'varchar', length: 64, primaryKeyConstraintName: 'SignInThrottle_pkey' }) address!: string;
  @Column({ name: 'WindowStart', type: 'timestamptz' }) windowStart!: Date;
  @Column({ name: 'FailureCount', type: 'integer' }) failureCount!: number;
}
