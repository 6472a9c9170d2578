import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventEmitter } from 'node:events';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';

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
 * The tenant of each kind of entry, by its id: a user's is its role's, a key's its user's. Raw SQL:
 * one indexed lookup per change; deleted (soft) entries still answer, so their deletion is scoped too.
 */
const TENANT_OF: Record<ServiceChangeEntity, string> = {
  UserRegistry: `SELECT r."TenantRegistryId" AS tenant FROM "UserRegistry" u JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId" WHERE u."Id" = $1`,
  RoleRegistry: `SELECT "TenantRegistryId" AS tenant FROM "RoleRegistry" WHERE "Id" = $1`,
  TenantRegistry: `SELECT "Id" AS tenant FROM "TenantRegistry" WHERE "Id" = $1`,
  UserRegistryApiKey: `SELECT r."TenantRegistryId" AS tenant FROM "UserRegistryApiKey" k
                         JOIN "UserRegistry" u ON u."Id" = k."UserRegistryId"
                         JOIN "RoleRegistry" r ON r."Id" = u."RoleRegistryId" WHERE k."Id" = $1`,
};

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
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Runs `listener` for every change made on this node, before the message goes on the bus. */
  onLocalChange(listener: (message: ServiceChangeMessage) => void): () => void {
    this.local.on('change', listener);
    return () => this.local.off('change', listener);
  }

  async publish(entity: ServiceChangeEntity, id: number, action: ServiceChangeAction): Promise<void> {
    const at = this.clock.now().toISOString();
    const message: ServiceChangeMessage = { entity, id, action, at, tenantRegistryId: await this.tenantOf(entity, id) };
    this.local.emit('change', message);
    try {
      await this.bus.publish(CHANNELS.serviceChange, JSON.stringify(message));
    } catch (error) {
      this.logger.warn(`could not publish the ${action} of ${entity} ${id}: ${(error as Error).message}`);
    }
  }

  private async tenantOf(entity: ServiceChangeEntity, id: number): Promise<number | null> {
    try {
      const rows: Array<{ tenant: number }> = await this.dataSource.query(TENANT_OF[entity], [id]);
      return rows[0]?.tenant ?? null;
    } catch (error) {
      // Fail closed: a change whose tenant is unknown reaches landlord streams only.
      this.logger.warn(`could not tell the tenant of ${entity} ${id}: ${(error as Error).message}`);
      return null;
    }
  }
}
