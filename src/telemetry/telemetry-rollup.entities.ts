import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/*
 * Per-minute rollups of the telemetry tables (decision 0021). Written only by the triggers of their
 * table (migration ArchiverWarningMinute), read only by the read engine (reads/series-sql.ts): no
 * repository writes them. The key index is UNIQUE … NULLS NOT DISTINCT, which TypeORM cannot
 * describe; the migration owns it.
 */

@Entity({ name: 'ArchiverWarningMinute' })
@Index('IX_ArchiverWarningMinute_Key', { synchronize: false })
export class ArchiverWarningMinute {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'ArchiverWarningMinute_pkey' })
  id!: string;
  /** Start of the minute of CreatedDate (date_bin from the epoch). */
  @Column({ name: 'Minute', type: 'timestamptz' }) minute!: Date;
  @Column({ name: 'StageId', type: 'smallint', nullable: true }) stageId!: number | null;
  @Column({ name: 'EntityAnalysisModelGuid', type: 'uuid', nullable: true }) entityAnalysisModelGuid!: string | null;
  @Column({ name: 'Instance', type: 'text', nullable: true }) instance!: string | null;
  /** The greatest name the minute's rows gave the model. */
  @Column({ name: 'EntityAnalysisModelName', type: 'text', nullable: true }) entityAnalysisModelName!: string | null;
  @Column({ name: 'Rows', type: 'bigint' }) rows!: string;
  @Column({ name: 'DurationMicrosecondsSum', type: 'numeric' }) durationMicrosecondsSum!: string;
  @Column({ name: 'DurationMicrosecondsMin', type: 'bigint' }) durationMicrosecondsMin!: string;
  @Column({ name: 'DurationMicrosecondsMax', type: 'bigint' }) durationMicrosecondsMax!: string;
}
