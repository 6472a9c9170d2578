import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { definedOnly } from '../common/defined-only';
import { RoleRegistryPermission } from './role-registry-permission.entity';
import { RoleRegistry } from './role-registry.entity';
import { TenantRegistry } from './tenant-registry.entity';

/** A role as the registry shows it: with its tenant's name and its permission ids, ascending. */
export interface RoleView {
  id: number;
  name: string;
  tenantRegistryId: number;
  tenantName: string;
  active: boolean;
  permissions: number[];
}

/** Every query on RoleRegistry. Name uniqueness per tenant (case-insensitive) is the database's: callers map 23505. */
@Injectable()
export class RoleRegistryRepository {
  constructor(@InjectRepository(RoleRegistry) private readonly repository: Repository<RoleRegistry>) {}

  /**
   * Roles of tenant `tenantScope` (every tenant when null), or the one role `id` among them, ordered
   * by id. One statement: the permissions come from a correlated sub-select.
   */
  findVisible(tenantScope: number | null, id?: number, tx?: EntityManager): Promise<RoleView[]> {
    const query = (tx?.getRepository(RoleRegistry) ?? this.repository)
      .createQueryBuilder('r')
      .innerJoin(TenantRegistry, 't', 't.id = r.tenantRegistryId')
      .select('r.id', 'id')
      .addSelect('r.name', 'name')
      .addSelect('r.tenantRegistryId', 'tenantRegistryId')
      .addSelect('t.name', 'tenantName')
      .addSelect('r.active', 'active')
      .addSelect(
        (sub) =>
          sub
            .select('coalesce(array_agg(p.permissionSpecificationId ORDER BY p.permissionSpecificationId), ARRAY[]::int[])')
            .from(RoleRegistryPermission, 'p')
            .where('p.roleRegistryId = r.id'),
        'permissions',
      )
      .orderBy('r.id');
    if (tenantScope !== null) query.andWhere('r.tenantRegistryId = :tenantScope', { tenantScope });
    if (id !== undefined) query.andWhere('r.id = :id', { id });
    return query.getRawMany<RoleView>();
  }

  async create(values: { tenantRegistryId: number; name: string; active: boolean }, tx?: EntityManager): Promise<number> {
    const { identifiers } = await (tx?.getRepository(RoleRegistry) ?? this.repository).insert(values);
    return identifiers[0].id as number;
  }

  /** Changes the given members; an omitted one stays. */
  async update(id: number, changes: { name?: string; active?: boolean }, tx?: EntityManager): Promise<void> {
    const set = definedOnly(changes);
    if (Object.keys(set).length === 0) return;
    await (tx?.getRepository(RoleRegistry) ?? this.repository).update({ id }, set);
  }

  /**
   * Role `id` among those of `tenantScope`, read after locking its row in `tx` (SELECT ... FOR UPDATE):
   * every change of a role or of its permissions takes this lock first, so the AdminChange's "before"
   * (contract 18) is what the change replaced even when two changes race. Null when there is none.
   */
  async lockForChange(tenantScope: number | null, id: number, tx: EntityManager): Promise<RoleView | null> {
    await tx.query(`SELECT 1 FROM "RoleRegistry" WHERE "Id" = $1 FOR UPDATE`, [id]);
    const rows = await this.findVisible(tenantScope, id, tx);
    return rows[0] ?? null;
  }

  /** The tenant of role `id`; null when there is no such role. */
  async tenantOf(id: number): Promise<number | null> {
    const role = await this.repository.findOne({ select: { tenantRegistryId: true }, where: { id } });
    return role?.tenantRegistryId ?? null;
  }
}
