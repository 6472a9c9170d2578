import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One metric series aggregated over a minute (contract 10), written by the capture flush. The DESC
 * and trigram read indexes are owned by the migrations.
 */
@Entity({ name: 'OpenTelemetryMetric' })
@Index('IX_OpenTelemetryMetric_CreatedDate', { synchronize: false })
@Index('IX_OpenTelemetryMetric_Name_Trgm', { synchronize: false })
export class OpenTelemetryMetric {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'OpenTelemetryMetric_pkey' })
  id!: string;
  @Column({ name: 'Name', type: 'text' }) name!: string;
  @Column({ name: 'Tags', type: 'jsonb', default: {} }) tags!: Record<string, string>;
  @Column({ name: 'Count', type: 'bigint', default: 0 }) count!: string;
  @Column({ name: 'Sum', type: 'double precision', default: 0 }) sum!: number;
  @Column({ name: 'Min', type: 'double precision', nullable: true }) min!: number | null;
  @Column({ name: 'Max', type: 'double precision', nullable: true }) max!: number | null;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'OpenTelemetryMetric_pkey' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}
