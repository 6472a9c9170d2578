import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/clock';
import { AppSettings, SETTINGS } from '../config/config.module';
import { Transactions } from '../database/transactions';
import { PasswordHasher } from './password-hasher.service';
import { PermissionSpecificationRepository } from './permission-specification.repository';
import { PERMISSION_NAMES } from '../access/permissions';
import { RoleRegistryPermissionRepository } from './role-registry-permission.repository';
import { RoleRegistryRepository } from './role-registry.repository';
import { TenantRegistryRepository } from './tenant-registry.repository';
import { UserRegistryRepository } from './user-registry.repository';

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
    private readonly transactions: Transactions,
    private readonly permissions: PermissionSpecificationRepository,
    private readonly tenants: TenantRegistryRepository,
    private readonly roles: RoleRegistryRepository,
    private readonly rolePermissions: RoleRegistryPermissionRepository,
    private readonly users: UserRegistryRepository,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.transactions.runLocked(SEED_LOCK_KEY, async (tx) => {
      await this.permissions.upsertAll(PERMISSION_NAMES, tx);
      if (await this.tenants.hasLandlord(tx)) return;
      // Hashed only now, on the first start: a restart spends no Argon2 hash (~40 ms) on a password it
      // will not store (issue 33). The lock is held that much longer, once per database.
      const passwordHash = await this.hasher.hash(this.settings.administratorInitialPassword);
      const tenantRegistryId = await this.tenants.createLandlord('Landlord', tx);
      const roleRegistryId = await this.roles.create({ tenantRegistryId, name: 'Administrator', active: true }, tx);
      await this.rolePermissions.replaceForRole(roleRegistryId, await this.permissions.findAllIds(tx), tx);
      const now = this.clock.now();
      await this.users.create(
        {
          roleRegistryId,
          name: 'Administrator',
          password: passwordHash,
          passwordCreatedDate: now,
          // Already expired: the first sign-in must set a new password.
          passwordExpiryDate: now,
          active: true,
          createdDate: now,
          createdUser: 'System',
        },
        tx,
      );
      this.logger.log('seeded the landlord tenant, the Administrator role and the Administrator user');
    });
  }
}
