import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { notFound } from '../common/problem';
import { UserRegistryRepository } from './user-registry.repository';

/** A user an administrator acts on. */
export interface TargetUser {
  id: number;
  name: string;
  tenantRegistryId: number;
  /** What the user may do (every permission for a landlord user), to refuse escalation. */
  permissions: number[];
}

const MAX_ID = 2_147_483_647;

/**
 * Finds the user an administrator route acts on, within the caller's reach: the caller's own tenant,
 * or any tenant for a landlord. Anything out of reach answers 404 exactly
 * like an id that does not exist, so another tenant's users are never revealed (contract 6).
 */
@Injectable()
export class TargetUsers {
  constructor(private readonly users: UserRegistryRepository) {}

  async find(caller: Principal, id: number): Promise<TargetUser> {
    if (!Number.isSafeInteger(id) || id < 1 || id > MAX_ID) throw notFound();
    const target = await this.users.findTarget(id);
    if (!target) throw notFound();
    if (!caller.landlord && target.tenantRegistryId !== caller.tenantRegistryId) throw notFound();
    return target;
  }
}
