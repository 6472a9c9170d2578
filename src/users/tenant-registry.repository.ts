import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { RecordedChanges, RecordRow } from '../database/recorded-change';
import { TenantRegistry } from './tenant-registry.entity';

/** Every query on TenantRegistry. Name uniqueness (case-insensitive) is the database's: callers map 23505. */
@Injectable()
export class TenantRegistryRepository {
  /** A tenant's change and its AdminChange row in one statement, generated from the entity (what it buys: database/recorded-change.ts). */
  private readonly recorded: RecordedChanges<TenantRegistry>;

  constructor(@InjectRepository(TenantRegistry) private readonly repository: Repository<TenantRegistry>) {
    this.recorded = new RecordedChanges<TenantRegistry>(repository.metadata);
  }

  findAll(): Promise<TenantRegistry[]> {
    return this.repository.find({ order: { id: 'ASC' } });
  }

  findById(id: number, tx?: EntityManager): Promise<TenantRegistry | null> {
    return (tx?.getRepository(TenantRegistry) ?? this.repository).findOneBy({ id });
  }

  /** The tenant as it is before a change, locked until the change's transaction ends. */
  findForChange(id: number, tx: EntityManager): Promise<TenantRegistry | null> {
    return tx.getRepository(TenantRegistry).findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
  }

  exists(id: number): Promise<boolean> {
    return this.repository.existsBy({ id });
  }

  /**
   * A new tenant, never a landlord (only the seed makes one), inserted with its AdminChange row `record`
   * in one statement (the row's TargetId and TargetTenantRegistryId are the new Id).
   */
  createRecorded(values: { name: string; active: boolean }, record: RecordRow): Promise<TenantRegistry> {
    return this.recorded.insert(this.repository.manager, {
      values: { name: values.name, landlord: false, active: values.active },
      record,
      fromRow: { targetId: 'id', targetTenantRegistryId: 'id' },
    });
  }

  /**
   * Changes the members `set` of tenant `id` under its row lock and inserts its AdminChange row `record`
   * (without Changes: rendered from the tenant locked and after; TargetName: the name after) in one
   * statement, while it is still (not) the landlord as `landlord` says, which the caller's check relied
   * on. No row when nothing changed. The tenant after, or null when it is gone or its landlord flag
   * differs. Inside `tx` when given.
   */
  changeRecorded(id: number, set: { name?: string; active?: boolean }, landlord: boolean, record: RecordRow, tx?: EntityManager): Promise<TenantRegistry | null> {
    const members = Object.entries(set).filter(([, value]) => value !== undefined).map(([field, value]) => ({ field, value }));
    return this.recorded.change(tx ?? this.repository.manager, {
      id,
      set: members,
      compared: { landlord },
      recorded: members.map((m) => m.field),
      record,
      fromRow: { targetName: 'name' },
    });
  }

  hasLandlord(tx?: EntityManager): Promise<boolean> {
    return (tx?.getRepository(TenantRegistry) ?? this.repository).existsBy({ landlord: true });
  }

  /** The landlord tenant, made once by the seed. */
  async createLandlord(name: string, tx?: EntityManager): Promise<number> {
    const { identifiers } = await (tx?.getRepository(TenantRegistry) ?? this.repository).insert({ name, landlord: true, active: true });
    return identifiers[0].id as number;
  }
}
