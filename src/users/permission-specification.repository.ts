import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { PermissionSpecification } from './permission-specification.entity';

/** Every query on PermissionSpecification (contract 6: fixed ids, written by the seed only). */
@Injectable()
export class PermissionSpecificationRepository {
  constructor(@InjectRepository(PermissionSpecification) private readonly repository: Repository<PermissionSpecification>) {}

  findAll(): Promise<PermissionSpecification[]> {
    return this.repository.find({ order: { id: 'ASC' } });
  }

  /** Which of `ids` exist. */
  async findExistingIds(ids: number[]): Promise<number[]> {
    if (ids.length === 0) return [];
    const rows = await this.repository.find({ select: { id: true }, where: { id: In(ids) } });
    return rows.map((row) => row.id);
  }

  /** Every id, ascending (what a landlord holds). */
  async findAllIds(tx?: EntityManager): Promise<number[]> {
    const rows = await (tx?.getRepository(PermissionSpecification) ?? this.repository).find({ select: { id: true }, order: { id: 'ASC' } });
    return rows.map((row) => row.id);
  }

  /** Writes the contract's list: new ids inserted, renamed ones updated, in one statement. */
  async upsertAll(names: Record<number, string>, tx?: EntityManager): Promise<void> {
    const rows = Object.entries(names).map(([id, name]) => ({ id: Number(id), name }));
    await (tx?.getRepository(PermissionSpecification) ?? this.repository).upsert(rows, ['id']);
  }
}
