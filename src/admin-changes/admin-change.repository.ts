import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AdminChange } from './admin-change.entity';

/** One AdminChange row as written (contract 18); texts already bounded and stripped by the recorder. */
export type NewAdminChange = Omit<AdminChange, 'id' | 'searchText'>;

/** Every statement that writes AdminChange: one insert, never an update or delete (the triggers refuse them). */
@Injectable()
export class AdminChangeRepository {
  constructor(@InjectRepository(AdminChange) private readonly repository: Repository<AdminChange>) {}

  /** Inserts one row, inside `tx` when the change it records is made there. */
  async insert(row: NewAdminChange, tx?: EntityManager): Promise<void> {
    await (tx?.getRepository(AdminChange) ?? this.repository).createQueryBuilder().insert().values(row).updateEntity(false).execute();
  }
}
