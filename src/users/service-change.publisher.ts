import { Injectable, Logger } from '@nestjs/common';
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
  ) {}

  /** Runs `listener` for every change made on this node, before the message goes on the bus. */
  onLocalChange(listener: (message: ServiceChangeMessage) => void): () => void {
    this.local.on('change', listener);
    return () => this.local.off('change', listener);
  }

  async publish(entity: ServiceChangeEntity, id: number, action: ServiceChangeAction): Promise<void> {
    const message: ServiceChangeMessage = { entity, id, action, at: this.clock.now().toISOString() };
    this.local.emit('change', message);
    try {
      await this.bus.publish(CHANNELS.serviceChange, JSON.stringify(message));
    } catch (error) {
      this.logger.warn(`could not publish the ${action} of ${entity} ${id}: ${(error as Error).message}`);
    }
  }
}
