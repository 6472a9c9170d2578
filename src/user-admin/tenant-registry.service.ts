import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { conflict, notFound } from '../common/problem';
import { uniqueOr409 } from '../users/registry-validation';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { Transactions } from '../database/transactions';
import { CreateTenantDto, TenantDto, UpdateTenantDto } from './tenant-registry.dto';
import { TenantRegistry } from '../users/tenant-registry.entity';
import { TenantRegistryRepository } from '../users/tenant-registry.repository';

const DUPLICATE = 'A tenant with this name already exists.';

function toDto(tenant: TenantRegistry): TenantDto {
  return { id: tenant.id, name: tenant.name, landlord: tenant.landlord, active: tenant.active };
}

/**
 * Tenants, administered by landlord users only (the guard enforces that). The landlord flag is set
 * by the seed alone: no route creates a landlord or takes the flag away.
 */
@Injectable()
export class TenantRegistryService {
  constructor(
    private readonly tenants: TenantRegistryRepository,
    private readonly changes: ServiceChangePublisher,
    private readonly transactions: Transactions,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  async list(): Promise<TenantDto[]> {
    return (await this.tenants.findAll()).map(toDto);
  }

  async create(actor: AdminActor, body: CreateTenantDto): Promise<TenantDto> {
    const tenant = await uniqueOr409(
      () =>
        this.transactions.runChange(async (tx) => {
          const created = await this.tenants.create({ name: body.name, active: body.active ?? true }, tx);
          await this.record(tx, actor, ActionTypeId.TenantCreated, created, changesText(null, fieldsOf(created)));
          return created;
        }),
      DUPLICATE,
    );
    await this.changes.publish('TenantRegistry', tenant.id, 'created');
    return toDto(tenant);
  }

  async update(actor: AdminActor, id: number, body: UpdateTenantDto): Promise<TenantDto> {
    const tenant = await uniqueOr409(
      () =>
        this.transactions.runChange(async (tx) => {
          const current = await this.tenants.findForChange(id, tx);
          if (!current) throw notFound('No such tenant.');
          // Deactivating the landlord tenant would shut every administrator out, with no way back in.
          if (current.landlord && body.active === false) throw conflict('The landlord tenant cannot be deactivated.');
          const before = fieldsOf(current);
          const changed = await this.tenants.update(id, { name: body.name ?? undefined, active: body.active ?? undefined }, tx);
          if (!changed) throw notFound('No such tenant.');
          const text = changesText(before, fieldsOf(changed));
          // One row per change: a PUT that changes nothing records nothing.
          if (text !== '{}') await this.record(tx, actor, ActionTypeId.TenantChanged, changed, text);
          return changed;
        }),
      DUPLICATE,
    );
    if (!tenant) throw notFound('No such tenant.');
    await this.changes.publish('TenantRegistry', tenant.id, 'updated');
    return toDto(tenant);
  }

  private record(tx: EntityManager, actor: AdminActor, actionType: ActionTypeId, tenant: TenantRegistry, changes: string): Promise<void> {
    return this.adminChanges.record(tx, actor, {
      actionType,
      targetTable: 'TenantRegistry',
      targetId: tenant.id,
      targetName: tenant.name,
      targetTenantRegistryId: tenant.id,
      changes,
    });
  }
}

/** A tenant's fields as the API names them, for Changes (contract 18). */
function fieldsOf(tenant: TenantRegistry) {
  return { name: tenant.name, landlord: tenant.landlord, active: tenant.active };
}
