import { Check, Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A SIEM sink (contract 19; migration SecuritySink). Read and written by SecuritySinkRepository only. */
@Entity({ name: 'SecuritySink' })
// The migration's checks, named here so that the entities and the migrations agree (test/schema.e2e-spec.ts).
@Check('SecuritySink_TypeId_check', '"TypeId" IN (1, 2)')
@Check('SecuritySink_FormatId_check', '"FormatId" IN (1, 2) AND ("FormatId" = 1 OR "TypeId" = 2)')
@Check('SecuritySink_NextLeafIndex_check', '"NextLeafIndex" >= 0')
export class SecuritySink {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'integer', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'SecuritySink_pkey' }) id!: number;
  @Column({ name: 'Name', type: 'varchar', length: 64, unique: true }) name!: string;
  @Column({ name: 'TypeId', type: 'smallint' }) typeId!: number;
  @Column({ name: 'Url', type: 'varchar', length: 512 }) url!: string;
  @Column({ name: 'FormatId', type: 'smallint' }) formatId!: number;
  /** AES-256-GCM envelope (sink-secret.ts), never the clear secret. */
  @Column({ name: 'Secret', type: 'text', nullable: true }) secret!: string | null;
  /** AES-256-GCM envelope of the headers object (names and values). */
  @Column({ name: 'Headers', type: 'text', nullable: true }) headers!: string | null;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
  @Column({ name: 'NextLeafIndex', type: 'bigint', default: 0 }) nextLeafIndex!: string;
  @Column({ name: 'LastDeliveredDate', type: 'timestamptz', nullable: true }) lastDeliveredDate!: Date | null;
  @Column({ name: 'LastAttemptDate', type: 'timestamptz', nullable: true }) lastAttemptDate!: Date | null;
  @Column({ name: 'LastError', type: 'varchar', length: 512, nullable: true }) lastError!: string | null;
  @Column({ name: 'FailingSince', type: 'timestamptz', nullable: true }) failingSince!: Date | null;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
  @Column({ name: 'CreatedUser', type: 'varchar', length: 256, nullable: true }) createdUser!: string | null;
}
