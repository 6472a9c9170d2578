import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { UserRegistry } from './user-registry.entity';

/** Queries on UserRegistry. */
@Injectable()
export class UserRegistryRepository {
  constructor(@InjectRepository(UserRegistry) private readonly repository: Repository<UserRegistry>) {}

  /** Inserts a user; the id it was given. */
  async create(values: Partial<UserRegistry>, tx?: EntityManager): Promise<number> {
    const { identifiers } = await (tx?.getRepository(UserRegistry) ?? this.repository).insert(values);
    return identifiers[0].id as number;
  }
}
