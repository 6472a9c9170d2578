import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Redis connection and Sentinel events (contract 10): two tables of the same shape, written by the
 * capture flush from the bus client's events. The DESC read indexes are owned by the migrations.
 */
abstract class RedisEvent {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT' })
  id!: string;
  @Column({ name: 'OccurredDate', type: 'timestamptz', default: () => 'now()' }) occurredDate!: Date;
  @Column({ name: 'EventName', type: 'text', nullable: true }) eventName!: string | null;
  @Column({ name: 'Endpoint', type: 'text', nullable: true }) endpoint!: string | null;
  @Column({ name: 'Message', type: 'text', nullable: true }) message!: string | null;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}

@Entity({ name: 'RedisConnectionEvent' })
@Index('IX_RedisConnectionEvent_CreatedDate', { synchronize: false })
export class RedisConnectionEvent extends RedisEvent {}

@Entity({ name: 'RedisSentinelEvent' })
@Index('IX_RedisSentinelEvent_CreatedDate', { synchronize: false })
export class RedisSentinelEvent extends RedisEvent {}
