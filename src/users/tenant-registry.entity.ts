import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A tenant (contract 6). Names are unique case-insensitively (an expression index the migration owns). */
@Entity({ name: 'TenantRegistry' })
// Every row in the table itself, none in a table inheriting from it (which no trigger of this one sees): migration NoInheritedRows.
@Check('TenantRegistry_OwnRows', `tableoid = '"TenantRegistry"'::regclass`)
@Index('UX_TenantRegistry_Name', { synchronize: false })
export class TenantRegistry {
  @PrimaryGeneratedColumn('identity', { name: 'Id', generatedIdentity: 'BY DEFAULT', primaryKeyConstraintName: 'TenantRegistry_pkey' })
  id!: number;
  @Column({ name: 'Name', type: 'varchar', length: 256 }) name!: string;
  /** The one tenant whose users see every tenant's rows. */
  @Column({ name: 'Landlord', type: 'boolean', default: false }) landlord!: boolean;
  @Column({ name: 'Active', type: 'boolean', default: true }) active!: boolean;
  @Column({ name: 'CreatedDate', type: 'timestamptz', default: () => 'now()' }) createdDate!: Date;
}
