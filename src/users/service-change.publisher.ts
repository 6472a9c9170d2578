import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter } from 'node:events';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { RoleRegistryRepository } from './role-registry.repository';
import { TenantRegistryRepository } from './tenant-registry.repository';
import { UserRegistryRepository } from './user-registry.repository';

export type ServiceChangeEntity = 'UserRegistry' | 'RoleRegistry' | 'TenantRegistry' | 'UserRegistryApiKey';
export type ServiceChangeAction = 'created' | 'updated' | 'deleted';

/** Message on the ServiceChange channel (contract 11), relayed by /api/ServiceChange/Stream. */
export interface ServiceChangeMessage {
  entity: ServiceChangeEntity;
  id: number;
  action: ServiceChangeAction;
  /** ISO-8601 instant of the change. */
  at: string;
  /**
   * The tenant the changed entry belongs to (contract 13): streams show it only to callers who could
   * read it through the registry routes. Null when it could not be told: then landlords only.
   */
  tenantRegistryId: number | null;
}

/**
 * Tells every node that a registry entry changed. Best effort: the change is already committed, so a
 * bus failure is logged at WARN and never fails the request (stream clients reload on reconnect).
 * Listeners on this node hear of the change first and synchronously, whether or not the bus works.
 */
@Injectable()
export class ServiceChangePublisher {
  private readonly logger = new Logger('ServiceChange');
  private readonly local = new EventEmitter();

  constructor(
    private readonly bus: Bus,
    private readonly clock: Clock,
    private readonly users: UserRegistryRepository,
    private readonly roles: RoleRegistryRepository,
    private readonly tenants: TenantRegistryRepository,
  ) {}

  /** Runs `listener` for every change made on this node, before the message goes on the bus. */
  onLocalChange(listener: (message: ServiceChangeMessage) => void): () => void {
    this.local.on('change', listener);
    return () => this.local.off('change', listener);
  }

  /** A change of a user, role or tenant. */
  publish(entity: Exclude<ServiceChangeEntity, 'UserRegistryApiKey'>, id: number, action: ServiceChangeAction): Promise<void>;
  /** A change of an API key, which belongs to the tenant of its user `ownerUserId`. */
  publish(entity: 'UserRegistryApiKey', id: number, action: ServiceChangeAction, ownerUserId: number): Promise<void>;
  async publish(entity: ServiceChangeEntity, id: number, action: ServiceChangeAction, ownerUserId?: number): Promise<void> {
    const at = this.clock.now().toISOString();
    const message: ServiceChangeMessage = { entity, id, action, at, tenantRegistryId: await this.tenantOf(entity, id, ownerUserId) };
    this.local.emit('change', message);
    try {
      await this.bus.publish(CHANNELS.serviceChange, JSON.stringify(message));
    } catch (error) {
      this.logger.warn(`could not publish the ${action} of ${entity} ${id}: ${(error as Error).message}`);
    }
  }

  /**
   * The tenant of the changed entry: a user's is its role's, a key's its user's. Deleted (soft)
   * entries still answer, so their deletion is scoped too. One indexed lookup per change.
   */
  private async tenantOf(entity: ServiceChangeEntity, id: number, ownerUserId?: number): Promise<number | null> {
    try {
      switch (entity) {
        case 'UserRegistry':
          return (await this.users.tenantsOf([id])).get(id) ?? null;
        case 'UserRegistryApiKey':
          return ownerUserId === undefined ? null : ((await this.users.tenantsOf([ownerUserId])).get(ownerUserId) ?? null);
        case 'RoleRegistry':
          return await this.roles.tenantOf(id);
        case 'TenantRegistry':
          return (await this.tenants.exists(id)) ? id : null;
      }
    } catch (error) {
      // Fail closed: a change whose tenant is unknown reaches landlord streams only.
      this.logger.warn(`could not tell the tenant of ${entity} ${id}: ${(error as Error).message}`);
      return null;
    }
  }
}
