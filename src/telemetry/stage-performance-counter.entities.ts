import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/*
 * Stage performance counters (contract 10): one row per stage (and model) that saw activity in a
 * minute, written by the capture flush. The read index is DESC with INCLUDE columns, which TypeORM
 * cannot describe; the migration owns it.
 */

@Entity({ name: 'ArchiverStagePerformanceCounter' })
@Index('IX_ArchiverStagePerformanceCounter_CreatedDate', { synchronize: false })
export class ArchiverStagePerformanceCounter {
  @PrimaryGeneratedColumn('identity', {
    name: 'Id',
    type: 'bigint',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'ArchiverStagePerformanceCounter_pkey',
  })
  id!: string;
  @Column({ name: 'EntityAnalysisModelGuid', type: 'uuid', nullable: true }) entityAnalysisModelGuid!: string | null;
  @Column({ name: 'StageId', type: 'smallint', nullable: true }) stageId!: number | null;
  @Column({ name: 'TotalMicroseconds', type: 'bigint', default: 0 }) totalMicroseconds!: string;
  @Column({ name: 'MinMicroseconds', type: 'bigint', default: 0 }) minMicroseconds!: string;
  @Column({ name: 'MaxMicroseconds', type: 'bigint', default: 0 }) maxMicroseconds!: string;
  @Column({ name: 'InvokeCount', type: 'bigint', default: 0 }) invokeCount!: string;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
  /** The model's name as the capture entry gave it (contract 17); NULL for rows written before it was kept. */
  @Column({ name: 'EntityAnalysisModelName', type: 'text', nullable: true }) entityAnalysisModelName!: string | null;
}

@Entity({ name: 'CaseCreationStagePerformanceCounter' })
@Index('IX_CaseCreationStagePerformanceCounter_CreatedDate', { synchronize: false })
export class CaseCreationStagePerformanceCounter {
  @PrimaryGeneratedColumn('identity', {
    name: 'Id',
    type: 'bigint',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'CaseCreationStagePerformanceCounter_pkey',
  })
  id!: string;
  @Column({ name: 'StageId', type: 'smallint', nullable: true }) stageId!: number | null;
  @Column({ name: 'TotalMicroseconds', type: 'bigint', default: 0 }) totalMicroseconds!: string;
  @Column({ name: 'MinMicroseconds', type: 'bigint', default: 0 }) minMicroseconds!: string;
  @Column({ name: 'MaxMicroseconds', type: 'bigint', default: 0 }) maxMicroseconds!: string;
  @Column({ name: 'InvokeCount', type: 'bigint', default: 0 }) invokeCount!: string;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
}
