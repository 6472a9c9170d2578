import { Column, Entity, PrimaryColumn, PrimaryGeneratedColumn, Unique } from 'typeorm';

/*
 * The tables of the tamper-evident log (contract 15, 16; migration TamperEvidentAudit). Written only
 * by the sealer (audit-sealer.ts) and, for AuditRetentionRun, by retention; read by the Audit routes.
 * Append-only triggers refuse UPDATE, DELETE and TRUNCATE on all but AuditPending. bigint columns come
 * back from the driver as strings.
 */

/** One leaf of the Merkle tree: a sealed row of UserLogin, UserLogout or AuditRetentionRun. */
@Entity({ name: 'AuditLeaf' })
@Unique('AuditLeaf_TableName_RowId_key', ['tableName', 'rowId'])
export class AuditLeaf {
  @PrimaryColumn({ name: 'LeafIndex', type: 'bigint', primaryKeyConstraintName: 'AuditLeaf_pkey' }) leafIndex!: string;
  @Column({ name: 'TableName', type: 'varchar', length: 32 }) tableName!: string;
  @Column({ name: 'RowId', type: 'bigint' }) rowId!: string;
  @Column({ name: 'RowCreatedDate', type: 'timestamptz' }) rowCreatedDate!: Date;
  @Column({ name: 'RowHash', type: 'bytea' }) rowHash!: Buffer;
  @Column({ name: 'LeafHash', type: 'bytea' }) leafHash!: Buffer;
  @Column({ name: 'SealedDate', type: 'timestamptz' }) sealedDate!: Date;
}

/** A signed checkpoint: the tree of the first TreeSize leaves, its root and its signed note. */
@Entity({ name: 'AuditCheckpoint' })
export class AuditCheckpoint {
  @PrimaryColumn({ name: 'TreeSize', type: 'bigint', primaryKeyConstraintName: 'AuditCheckpoint_pkey' }) treeSize!: string;
  @Column({ name: 'RootHash', type: 'bytea' }) rootHash!: Buffer;
  @Column({ name: 'CreatedDate', type: 'timestamptz' }) createdDate!: Date;
  @Column({ name: 'Note', type: 'text' }) note!: string;
}

/** One dropped audit partition (contract 16), sealed like a sign-in row. */
@Entity({ name: 'AuditRetentionRun' })
export class AuditRetentionRun {
  @PrimaryGeneratedColumn('identity', { name: 'Id', type: 'bigint', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'AuditRetentionRun_pkey' })
  id!: string;
  @Column({ name: 'RunDate', type: 'timestamptz', default: () => 'now()' }) runDate!: Date;
  @Column({ name: 'TableName', type: 'varchar', length: 64 }) tableName!: string;
  @Column({ name: 'PartitionName', type: 'varchar', length: 128 }) partitionName!: string;
  @Column({ name: 'Cutoff', type: 'timestamptz' }) cutoff!: Date;
  @Column({ name: 'RowCount', type: 'bigint' }) rowCount!: string;
}

/** The hash of the perfect subtree over leaves [Index·2^Level, (Index+1)·2^Level), kept at every fourth level. */
@Entity({ name: 'AuditTreeNode' })
export class AuditTreeNode {
  @PrimaryColumn({ name: 'Level', type: 'smallint', primaryKeyConstraintName: 'AuditTreeNode_pkey' }) level!: number;
  @PrimaryColumn({ name: 'Index', type: 'bigint', primaryKeyConstraintName: 'AuditTreeNode_pkey' }) index!: string;
  @Column({ name: 'Hash', type: 'bytea' }) hash!: Buffer;
}

/**
 * A committed row not yet sealed, written by the AFTER INSERT trigger of its table with the row's leaf
 * date and hashes (migration PendingHashes; NULL for a row no canonical form can hold, or an entry
 * written otherwise: the sealer's careful statement hashes those from the row).
 */
@Entity({ name: 'AuditPending' })
@Unique('AuditPending_TableName_RowId_key', ['tableName', 'rowId'])
export class AuditPending {
  @PrimaryGeneratedColumn('identity', { name: 'Seq', type: 'bigint', generatedIdentity: 'ALWAYS', primaryKeyConstraintName: 'AuditPending_pkey' })
  seq!: string;
  @Column({ name: 'TableName', type: 'varchar', length: 32 }) tableName!: string;
  @Column({ name: 'RowId', type: 'bigint' }) rowId!: string;
  @Column({ name: 'EnqueuedDate', type: 'timestamptz', default: () => 'now()' }) enqueuedDate!: Date;
  @Column({ name: 'RowCreatedDate', type: 'timestamptz', nullable: true }) rowCreatedDate!: Date | null;
  @Column({ name: 'RowHash', type: 'bytea', nullable: true }) rowHash!: Buffer | null;
  @Column({ name: 'LeafHash', type: 'bytea', nullable: true }) leafHash!: Buffer | null;
}

export const AUDIT_LOG_ENTITIES = [AuditLeaf, AuditCheckpoint, AuditRetentionRun, AuditTreeNode, AuditPending];
