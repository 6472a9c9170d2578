import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A permission a role can grant (contract 6); ids are fixed by the contract, not generated. */
@Entity({ name: 'PermissionSpecification' })
export class PermissionSpecification {
  @PrimaryColumn({ name: 'Id', type: 'integer', primaryKeyConstraintName: 'PermissionSpecification_pkey' }) id!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
}
