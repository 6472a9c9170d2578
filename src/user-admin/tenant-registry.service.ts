import { Injectable } from '@nestjs/common';
import { conflict, notFound } from '../common/problem';
import { uniqueOr409 } from '../users/registry-validation';
import { ServiceChangePublisher } from '../users/service-change.publisher';
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
  ) {}

  async list(): Promise<TenantDto[]> {
    return (await this.tenants.findAll()).map(toDto);
  }

  async create(body: CreateTenantDto): Promise<TenantDto> {
    const tenant = await uniqueOr409(() => this.tenants.create({ name: body.name, active: body.active ?? true }), DUPLICATE);
    await this.changes.publish('TenantRegistry', tenant.id, 'created');
    return toDto(tenant);
  }

  async update(id: number, body: UpdateTenantDto): Promise<TenantDto> {
    const current = await this.tenants.findById(id);
    if (!current) throw notFound('No such tenant.');
    // Deactivating the landlord tenant would shut every administrator out, with no way back in.
    if (current.landlord && body.active === false) throw conflict('The landlord tenant cannot be deactivated.');
    const tenant = await uniqueOr409(
      () => this.tenants.update(id, { name: body.name ?? undefined, active: body.active ?? undefined }),
      DUPLICATE,
    );
    if (!tenant) throw notFound('No such tenant.');
    await this.changes.publish('TenantRegistry', tenant.id, 'updated');
    return toDto(tenant);
  }
}
