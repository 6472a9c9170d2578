import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/*
 * Pipeline warnings (contract 10): one row per slow stage or model invocation, written by the capture
 * flush. Their DESC/INCLUDE and trigram indexes are owned by the migrations (TypeORM cannot describe
 * them).
 */

@Entity({ name: 'ArchiverWarning' })
@Index('IX_ArchiverWarning_CreatedDate', { synchronize: false })
export class ArchiverWarning {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'ArchiverWarning_pkey' })
  id!: string;
  @Column({ name: 'OccurredDate', type: 'timestamptz', default: () => 'now()' }) occurredDate!: Date;
  @Column({ name: 'EntityAnalysisModelGuid', type: 'uuid', nullable: true }) entityAnalysisModelGuid!: string | null;
  @Column({ name: 'EntityAnalysisModelName', type: 'text', nullable: true }) entityAnalysisModelName!: string | null;
  @Column({ name: 'EntityAnalysisModelInstanceEntryGuid', type: 'uuid', nullable: true }) entityAnalysisModelInstanceEntryGuid!: string | null;
  @Column({ name: 'StageId', type: 'smallint', nullable: true }) stageId!: number | null;
  @Column({ name: 'DurationMicroseconds', type: 'bigint', default: 0 }) durationMicroseconds!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'ArchiverWarning_pkey' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}

@Entity({ name: 'CaseCreationWarning' })
@Index('IX_CaseCreationWarning_CreatedDate', { synchronize: false })
@Index('IX_CaseCreationWarning_CaseKeyValue_Trgm', { synchronize: false })
export class CaseCreationWarning {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'CaseCreationWarning_pkey' })
  id!: string;
  @Column({ name: 'OccurredDate', type: 'timestamptz', default: () => 'now()' }) occurredDate!: Date;
  @Column({ name: 'CaseWorkflowGuid', type: 'uuid', nullable: true }) caseWorkflowGuid!: string | null;
  @Column({ name: 'CaseWorkflowName', type: 'text', nullable: true }) caseWorkflowName!: string | null;
  @Column({ name: 'CaseKey', type: 'text', nullable: true }) caseKey!: string | null;
  @Column({ name: 'CaseKeyValue', type: 'text', nullable: true }) caseKeyValue!: string | null;
  @Column({ name: 'StageId', type: 'smallint', nullable: true }) stageId!: number | null;
  @Column({ name: 'Destination', type: 'text', nullable: true }) destination!: string | null;
  @Column({ name: 'DurationMicroseconds', type: 'bigint', default: 0 }) durationMicroseconds!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'CaseCreationWarning_pkey' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}

@Entity({ name: 'ModelInvokeWarning' })
@Index('IX_ModelInvokeWarning_OccurredDate', { synchronize: false })
@Index('IX_ModelInvokeWarning_Model_OccurredDate', { synchronize: false })
@Index('IX_ModelInvokeWarning_ModelName_Trgm', { synchronize: false })
@Index('IX_ModelInvokeWarning_Message_Trgm', { synchronize: false })
export class ModelInvokeWarning {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'ModelInvokeWarning_pkey' })
  id!: string;
  @Column({ name: 'OccurredDate', type: 'timestamptz', default: () => 'now()' }) occurredDate!: Date;
  @Column({ name: 'EntityAnalysisModelGuid', type: 'uuid', nullable: true }) entityAnalysisModelGuid!: string | null;
  @Column({ name: 'EntityAnalysisModelName', type: 'text', nullable: true }) entityAnalysisModelName!: string | null;
  @Column({ name: 'EntityAnalysisModelInstanceEntryGuid', type: 'uuid', nullable: true }) entityAnalysisModelInstanceEntryGuid!: string | null;
  @Column({ name: 'Message', type: 'text', nullable: true }) message!: string | null;
  @Column({ name: 'ElapsedMicroseconds', type: 'bigint', default: 0 }) elapsedMicroseconds!: string;
  @Column({ name: 'SinceLastEntryMicroseconds', type: 'bigint', default: 0 }) sinceLastEntryMicroseconds!: string;
  /** Part of the primary key: the partition key of a partitioned table must be (contract 16, migration PartitionTelemetry). */
  @PrimaryColumn({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()', primaryKeyConstraintName: 'ModelInvokeWarning_pkey' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}
