import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { BOUNDS, boundText } from '../common/text';
import { UserLogin } from './user-login.entity';

/** One sign-in attempt as written (contract 9); the texts are bounded and stripped here. */
export interface NewUserLogin {
  createdDate: Date;
  createdUser: string | null;
  userRegistryId: number | null;
  tenantRegistryId: number | null;
  authenticationTypeId: number;
  failureTypeId: number | null;
  failureMessage: string | null;
  remoteIp: string | null;
  localIp: string | null;
  userAgent: string | null;
}

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
      .values({
        createdDate: row.createdDate,
        createdUser: boundText(row.createdUser, BOUNDS.name),
        userRegistryId: row.userRegistryId,
        tenantRegistryId: row.tenantRegistryId,
        authenticationTypeId: row.authenticationTypeId,
        failed: row.failureTypeId !== null,
        failureTypeId: row.failureTypeId,
        failureMessage: boundText(row.failureMessage, BOUNDS.failureMessage),
        remoteIp: boundText(row.remoteIp, BOUNDS.ip),
        localIp: boundText(row.localIp, BOUNDS.ip),
        userAgent: boundText(row.userAgent, BOUNDS.userAgent),
      })
      // Nothing to read back: no RETURNING of the generated Id and defaults.
      .updateEntity(false)
      .execute();
  }
}
