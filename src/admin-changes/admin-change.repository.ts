import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { AdminChange } from './admin-change.entity';

/** One AdminChange row as written (contract 18); texts already bounded and stripped by the recorder. */
export type NewAdminChange = Omit<AdminChange, 'id' | 'searchText'>;

/** The columns an insert writes, in the order of INSERT_SQL's parameters (Id comes from the identity). */
const INSERTED: readonly (keyof NewAdminChange)[] = [
  'createdDate', 'createdUser', 'userRegistryId', 'tenantRegistryId', 'credentialTypeId', 'credentialId', 'actionTypeId', 'targetTable',
  'targetId', 'targetName', 'targetTenantRegistryId', 'failed', 'changes', 'remoteIp', 'localIp', 'userAgent',
];

/**
 * The insert as one fixed parameterised statement rather than the ORM's insert builder: it runs inside
 * every registry write's transaction, and building the statement from metadata on each call cost the
 * service more CPU than sending it (bench/admin-change-write.js, bench/RESULTS.md, issue 29).
 */
const INSERT_SQL = `INSERT INTO "AdminChange" ("CreatedDate", "CreatedUser", "UserRegistryId", "TenantRegistryId", "CredentialTypeId", "CredentialId",
  "ActionTypeId", "TargetTable", "TargetId", "TargetName", "TargetTenantRegistryId", "Failed", "Changes", "RemoteIp", "LocalIp", "UserAgent")
  VALUES (${INSERTED.map((_, i) => `$${i + 1}`).join(', ')})`;

/** Every statement that writes AdminChange: one insert, never an update or delete (the triggers refuse them). */
@Injectable()
export class AdminChangeRepository {
  constructor(@InjectRepository(AdminChange) private readonly repository: Repository<AdminChange>) {}

  /** Inserts one row, inside `tx` when the change it records is made there. */
  async insert(row: NewAdminChange, tx?: EntityManager): Promise<void> {
    await (tx ?? this.repository.manager).query(INSERT_SQL, INSERTED.map((column) => row[column]));
  }
}
