import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One row per capture queue per flush (contract 10): its depth before the drain and what it dropped
 * since the previous flush. The DESC/INCLUDE read index is owned by the migration.
 */
@Entity({ name: 'CaptureQueueHealth' })
@Index('IX_CaptureQueueHealth_CreatedDate', { synchronize: false })
export class CaptureQueueHealth {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'CaptureQueueHealth_pkey' })
  id!: string;
  @Column({ name: 'QueueId', type: 'smallint' }) queueId!: number;
  @Column({ name: 'QueueDepth', type: 'integer', default: 0 }) queueDepth!: number;
  @Column({ name: 'DroppedCount', type: 'bigint', default: 0 }) droppedCount!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'CaptureQueueHealth_pkey' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}
