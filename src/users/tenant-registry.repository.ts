import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { definedOnly } from '../common/defined-only';
import { TenantRegistry } from './tenant-registry.entity';

/** Every query on TenantRegistry. Name uniqueness (case-insensitive) is the database's: callers map 23505. */
@Injectable()
export class TenantRegistryRepository {
  constructor(@InjectRepository(TenantRegistry) private readonly repository: Repository<TenantRegistry>) {}

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

  /** A new tenant; never a landlord (only the seed makes one). */
  async create(values: { name: string; active: boolean }, tx?: EntityManager): Promise<TenantRegistry> {
    const repository = tx?.getRepository(TenantRegistry) ?? this.repository;
    const { identifiers } = await repository.insert({ name: values.name, landlord: false, active: values.active });
    return repository.findOneByOrFail({ id: identifiers[0].id as number });
  }

  /** Changes the given members (an omitted one stays); null when there is no such tenant. */
  async update(id: number, changes: { name?: string; active?: boolean }, tx?: EntityManager): Promise<TenantRegistry | null> {
    const set = definedOnly(changes);
    if (Object.keys(set).length > 0) {
      const { affected } = await (tx?.getRepository(TenantRegistry) ?? this.repository).update({ id }, set);
      if (!affected) return null;
    }
    return this.findById(id, tx);
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
