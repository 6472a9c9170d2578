import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { RoleRegistryPermission } from './role-registry-permission.entity';

/** Every query on RoleRegistryPermission: the permissions a role grants. */
@Injectable()
export class RoleRegistryPermissionRepository {
  constructor(@InjectRepository(RoleRegistryPermission) private readonly repository: Repository<RoleRegistryPermission>) {}

  /** Makes `permissionIds` the role's whole grant (call inside the transaction that changes the role). */
  async replaceForRole(roleRegistryId: number, permissionIds: number[], tx?: EntityManager): Promise<void> {
    const repository = tx?.getRepository(RoleRegistryPermission) ?? this.repository;
    await repository.delete({ roleRegistryId });
    if (permissionIds.length === 0) return;
    await repository.insert(permissionIds.map((permissionSpecificationId) => ({ roleRegistryId, permissionSpecificationId })));
  }
}
