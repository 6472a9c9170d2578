import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { PasswordHasher } from './password-hasher.service';
import { PERMISSION_NAMES } from './permissions';

const SEED_LOCK_KEY = 7_206_310_452;

/**
 * First start (contract 1): the landlord tenant `Landlord`, the role `Administrator` with every
 * permission, and the user `Administrator` whose password is already expired, so the first sign-in
 * must set a new one. Runs in one transaction under an advisory lock: two nodes seed once.
 */
@Injectable()
export class SeedService implements OnModuleInit {
  private readonly logger = new Logger('Seed');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
  ) {}

  async onModuleInit(): Promise<void> {
    const passwordHash = await this.hasher.hash(this.settings.administratorInitialPassword);
    await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [SEED_LOCK_KEY]);
      for (const [id, name] of Object.entries(PERMISSION_NAMES)) {
        await manager.query(
          `INSERT INTO "PermissionSpecification" ("Id", "Name") VALUES ($1, $2) ON CONFLICT ("Id") DO UPDATE SET "Name" = EXCLUDED."Name"`,
          [Number(id), name],
        );
      }
      const [{ count }] = await manager.query(`SELECT count(*)::int AS count FROM "TenantRegistry" WHERE "Landlord"`);
      if (count > 0) return;
      const [tenant] = await manager.query(
        `INSERT INTO "TenantRegistry" ("Name", "Landlord", "Active") VALUES ('Landlord', true, true) RETURNING "Id"`,
      );
      const [role] = await manager.query(
        `INSERT INTO "RoleRegistry" ("TenantRegistryId", "Name", "Active") VALUES ($1, 'Administrator', true) RETURNING "Id"`,
        [tenant.Id],
      );
      await manager.query(
        `INSERT INTO "RoleRegistryPermission" ("RoleRegistryId", "PermissionSpecificationId")
         SELECT $1, "Id" FROM "PermissionSpecification"`,
        [role.Id],
      );
      const now = this.clock.now();
      await manager.query(
        `INSERT INTO "UserRegistry" ("RoleRegistryId", "Name", "Password", "PasswordCreatedDate", "PasswordExpiryDate",
                                     "Active", "CreatedDate", "CreatedUser")
         VALUES ($1, 'Administrator', $2, $3, $3, true, $3, 'System')`,
        [role.Id, passwordHash, now],
      );
      this.logger.log('seeded the landlord tenant, the Administrator role and the Administrator user');
    });
  }
}
