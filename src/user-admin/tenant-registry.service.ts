import { Injectable } from '@nestjs/common';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { conflict, notFound } from '../common/problem';
import { uniqueOr409 } from '../users/registry-validation';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { MISSED, Transactions } from '../database/transactions';
import { definedOnly } from '../common/defined-only';
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
    const values = { name: body.name, landlord: false, active: body.active ?? true };
    // One statement inserts the tenant and its row (TargetId: the new Id), in autocommit: both or neither.
    const record = this.row(actor, ActionTypeId.TenantCreated, { id: null, name: values.name }, changesText(null, values));
    const tenant = await uniqueOr409(() => this.tenants.createRecorded(values, record), DUPLICATE);
    await this.changes.publish('TenantRegistry', tenant.id, 'created');
    return toDto(tenant);
  }

  /**
   * A plain read (404, the landlord rule), then one statement that locks the tenant, changes it and
   * records it with the Changes rendered from the row it locked (docs/decisions/0037): a concurrent
   * rename between the read and the write is the "before", not a miss. Only the landlord flag the rule
   * relied on is compared; when it differs (or the tenant is gone) the change is made again under the
   * row lock from a fresh read (Transactions.compareAndSet).
   */
  async update(actor: AdminActor, id: number, body: UpdateTenantDto): Promise<TenantDto> {
    const set = definedOnly({ name: body.name ?? undefined, active: body.active ?? undefined });
    const tenant = await uniqueOr409(
      () =>
        this.transactions.compareAndSet(async (tx) => {
          const current = tx ? await this.tenants.findForChange(id, tx) : await this.tenants.findById(id);
          if (!current) throw notFound('No such tenant.');
          // Deactivating the landlord tenant would shut every administrator out, with no way back in.
          if (current.landlord && body.active === false) throw conflict('The landlord tenant cannot be deactivated.');
          // A PUT that changes nothing as read writes nothing (and records nothing).
          const before = fieldsOf(current);
          if (changesText(before, { ...before, ...set }) === '{}') return current;
          const record = this.adminChanges.memberChangeRow(actor, {
            actionType: ActionTypeId.TenantChanged,
            targetTable: 'TenantRegistry',
            targetId: id,
            targetName: current.name, // the statement writes the name after
            targetTenantRegistryId: id,
          });
          return (await this.tenants.changeRecorded(id, set, current.landlord, record, tx ?? undefined)) ?? MISSED;
        }),
      DUPLICATE,
    );
    await this.changes.publish('TenantRegistry', tenant.id, 'updated');
    return toDto(tenant);
  }

  /** The AdminChange row of a change to a tenant (its own tenant); a creation's id comes from the new row. */
  private row(actor: AdminActor, actionType: ActionTypeId, tenant: { id: number | null; name: string }, changes: string) {
    return this.adminChanges.changeRow(actor, {
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
