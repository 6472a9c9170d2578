import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { boundTexts } from '../common/text';
import { textBoundsOf } from '../database/text-bounds';
import { UserLogin } from './user-login.entity';

/**
 * One sign-in attempt as written (contract 9): the entity's columns less the generated Id, Failed
 * (which follows from FailureTypeId) and the trigger-kept SearchText, so a new column is declared
 * once, on the entity. The texts are bounded and stripped here.
 */
export type NewUserLogin = Omit<UserLogin, 'id' | 'failed' | 'searchText'>;

/** The bound of every caller text of a UserLogin row: its column's length. */
export const USER_LOGIN_TEXT_BOUNDS = textBoundsOf(UserLogin);

/**
 * Every statement that writes UserLogin. The trail is never updated or deleted by the service; it is
 * read through the read engine (audit.tables.ts describes it for reads/). Every caller text is
 * stripped of control characters and bounded here, so no path stores a hostile value as written.
 */
@Injectable()
export class UserLoginRepository {
  constructor(@InjectRepository(UserLogin) private readonly repository: Repository<UserLogin>) {}

  /** Inserts one row, inside `tx` when the sign-in writes it in its own transaction. */
  async insert(row: NewUserLogin, tx?: EntityManager): Promise<void> {
    await (tx?.getRepository(UserLogin) ?? this.repository)
      .createQueryBuilder()
      .insert()
      .values({ ...boundTexts(row, USER_LOGIN_TEXT_BOUNDS), failed: row.failureTypeId !== null })
      // Nothing to read back: no RETURNING of the generated Id and defaults.
      .updateEntity(false)
      .execute();
  }
}
