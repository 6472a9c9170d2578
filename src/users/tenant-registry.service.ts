import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { conflict, notFound } from '../common/problem';
import { uniqueOr409 } from './registry-validation';
import { ServiceChangePublisher } from './service-change.publisher';
import { CreateTenantDto, TenantDto, UpdateTenantDto } from './tenant-registry.dto';

const TENANT_COLUMNS = `"Id" AS id, "Name" AS name, "Landlord" AS landlord, "Active" AS active`;
const DUPLICATE = 'A tenant with this name already exists.';

/**
 * Tenants, administered by landlord users only (the guard enforces that). The landlord flag is set
 * by the seed alone: no route creates a landlord or takes the flag away.
 */
@Injectable()
export class TenantRegistryService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly changes: ServiceChangePublisher,
  ) {}

  list(): Promise<TenantDto[]> {
    return this.dataSource.query(`SELECT ${TENANT_COLUMNS} FROM "TenantRegistry" ORDER BY "Id"`);
  }

  async create(body: CreateTenantDto): Promise<TenantDto> {
    const [tenant]: TenantDto[] = await uniqueOr409(
      () =>
        this.dataSource.query(
          `INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ($1, false, $2) RETURNING ${TENANT_COLUMNS}`,
          [body.name, body.active ?? true],
        ),
      DUPLICATE,
    );
    await this.changes.publish('TenantRegistry', tenant.id, 'created');
    return tenant;
  }

  async update(id: number, body: UpdateTenantDto): Promise<TenantDto> {
    const [current]: TenantDto[] = await this.dataSource.query(`SELECT ${TENANT_COLUMNS} FROM "TenantRegistry" WHERE "Id" = $1`, [id]);
    if (!current) throw notFound('No such tenant.');
    // Deactivating the landlord tenant would shut every administrator out, with no way back in.
    if (current.landlord && body.active === false) throw conflict('The landlord tenant cannot be deactivated.');
    const [rows]: [TenantDto[], number] = await uniqueOr409(
      () =>
        this.dataSource.query(
          `UPDATE "TenantRegistry" SET "Name" = COALESCE($2, "Name"), "Active" = COALESCE($3, "Active")
            WHERE "Id" = $1 RETURNING ${TENANT_COLUMNS}`,
          [id, body.name ?? null, body.active ?? null],
        ),
      DUPLICATE,
    );
    const tenant = rows[0];
    if (!tenant) throw notFound('No such tenant.');
    await this.changes.publish('TenantRegistry', tenant.id, 'updated');
    return tenant;
  }
}
