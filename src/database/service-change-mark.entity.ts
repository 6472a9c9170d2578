import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The SHA-256 of the service's mark (migration ServiceChangeMark; service-change-mark.ts): one row, which
 * the registry triggers compare with the mark a transaction carries. Written by the service at start
 * (writeServiceChangeMark), never read by it.
 */
@Entity({ name: 'ServiceChangeMark' })
// The migration's checks, named here so that the entities and the migrations agree (test/schema.e2e-spec.ts).
@Check('ServiceChangeMark_Id_check', '"Id" = 1')
@Check('ServiceChangeMark_Hash_check', 'octet_length("Hash") = 32')
export class ServiceChangeMark {
  @PrimaryColumn({ name: 'Id', type: 'smallint', primaryKeyConstraintName: 'ServiceChangeMark_pkey' }) id!: number;
  @Column({ name: 'Hash', type: 'bytea' }) hash!: Buffer;
}
