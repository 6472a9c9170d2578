import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { AdminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { Transactions } from '../database/transactions';
import { Bus, CHANNELS } from '../bus/bus';
import { Clock } from '../common/clock';
import { badRequest, notFound } from '../common/problem';
import { boundText } from '../common/text';
import { AppSettings, SETTINGS } from '../config/config.module';
import { refuseEscalation } from '../users/registry-scope';
import { ServiceChangePublisher } from '../users/service-change.publisher';
import { ActiveApiKeys } from './active-api-keys';
import { generateApiKey } from './api-key.format';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto } from './api-keys.dto';
import { TargetUsers } from '../users/target-users';
import { UserRegistryApiKeyRepository } from './user-registry-api-key.repository';

/**
 * API keys of a user (contract 5): generate (the clear value leaves this service once, in the
 * answer), list, revoke. Only the SHA-256 and the display identifier are stored. Every change is
 * applied to this node's active set at once and announced to the other nodes over the bus; a lost
 * message is made good by their once-a-minute reload.
 */
@Injectable()
export class ApiKeys {
  private readonly logger = new Logger('ApiKeys');

  constructor(
    private readonly keys: UserRegistryApiKeyRepository,
    private readonly targets: TargetUsers,
    private readonly active: ActiveApiKeys,
    private readonly bus: Bus,
    private readonly changes: ServiceChangePublisher,
    private readonly clock: Clock,
    @Inject(SETTINGS) private readonly settings: AppSettings,
    private readonly transactions: Transactions,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  async create(actor: AdminActor, userRegistryId: number, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const caller = actor.principal;
    const name = boundText(dto.name, 256)?.trim() ?? '';
    if (name === '') throw badRequest('The request is not valid.', [{ field: 'name', message: 'name should not be empty' }]);
    const description = boundText(dto.description, 1024);
    const user = await this.targets.find(caller, userRegistryId);
    // A key acts as its user: a tenant administrator may not mint one for a user stronger than itself.
    refuseEscalation(caller, user.permissions, 'create an API key for this user');
    const generated = generateApiKey(user.name, this.settings.apiHmacKey);
    const createdDate = this.clock.now();
    // Contract 18: the key itself never, only its display identifier. One statement stores the key
    // and its row (TargetId: the new key's Id), in autocommit: both or neither.
    const record = this.adminChanges.changeRow(actor, {
      actionType: ActionTypeId.ApiKeyCreated,
      targetTable: 'UserRegistryApiKey',
      targetId: null,
      targetName: name,
      targetTenantRegistryId: user.tenantRegistryId,
      changes: changesText(null, { name, description, apiKeyDisplay: generated.display, userRegistryId: user.id }),
    });
    const id = await this.keys.createRecorded(
      {
        userRegistryId: user.id,
        name,
        description,
        apiKey: generated.hash,
        apiKeyDisplay: generated.display,
        createdDate,
        createdUser: boundText(caller.userName, 256),
      },
      record,
    );
    this.active.add(generated.hash, { keyId: id, userRegistryId: user.id, display: generated.display });
    await this.announce(CHANNELS.apiKeySet, generated.hash);
    await this.changes.publish('UserRegistryApiKey', id, 'created', user.id);
    this.logger.log(`API key ${generated.display} (id ${id}) created for user ${user.id} by ${caller.userName}`);
    return {
      id,
      name,
      description,
      apiKey: generated.key,
      apiKeyDisplay: generated.display,
      createdDate: createdDate.toISOString(),
    };
  }

  /**
   * The user's keys. By default only active ones, exactly as contract 5 answers; with
   * `includeRevoked` the revoked ones follow as history, each with when and by whom it was revoked.
   */
  async list(caller: Principal, userRegistryId: number, options: { includeRevoked?: boolean } = {}): Promise<ApiKeyDto[]> {
    const user = await this.targets.find(caller, userRegistryId);
    const rows = options.includeRevoked ? await this.keys.findByUser(user.id) : await this.keys.findActiveByUser(user.id);
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      description: r.description,
      apiKeyDisplay: r.apiKeyDisplay,
      createdDate: r.createdDate.toISOString(),
      createdUser: r.createdUser,
      lastUsedDate: r.lastUsedDate?.toISOString() ?? null,
      lastUsedUserAgent: r.lastUsedUserAgent,
      ...(options.includeRevoked
        ? { revoked: r.deleted, revokedDate: r.deletedDate?.toISOString() ?? null, revokedBy: r.deletedUser }
        : {}),
    }));
  }

  /**
   * Revokes a key of the user; revoking it again changes nothing and answers the same. A key id that
   * is not this user's answers 404.
   */
  async revoke(actor: AdminActor, userRegistryId: number, keyId: number): Promise<void> {
    const caller = actor.principal;
    const user = await this.targets.find(caller, userRegistryId);
    if (!Number.isSafeInteger(keyId) || keyId < 1 || keyId > 2_147_483_647) throw notFound();
    const key = await this.transactions.runChange(async (tx) => {
      const revoked = await this.keys.revoke(keyId, user.id, this.clock.now(), boundText(caller.userName, 256), tx);
      // A repeat changes nothing and records nothing (contract 5: idempotent).
      if (revoked?.changed) {
        await this.adminChanges.record(tx, actor, {
          actionType: ActionTypeId.ApiKeyRevoked,
          targetTable: 'UserRegistryApiKey',
          targetId: keyId,
          targetName: revoked.name,
          targetTenantRegistryId: user.tenantRegistryId,
          changes: changesText({ name: revoked.name, apiKeyDisplay: revoked.display, userRegistryId: user.id }, null),
        });
      }
      return revoked;
    });
    if (!key) throw notFound();
    // Announced again on a repeat, in case the first message was lost.
    this.active.remove(key.hash);
    await this.announce(CHANNELS.apiKeyRemove, key.hash);
    if (key.changed) {
      this.logger.log(`API key ${key.display} (id ${keyId}) of user ${user.id} revoked by ${caller.userName}`);
      await this.changes.publish('UserRegistryApiKey', keyId, 'deleted', user.id);
    }
  }

  private async announce(channel: string, hash: string): Promise<void> {
    try {
      await this.bus.publish(channel, hash);
    } catch (error) {
      this.logger.warn(`could not publish ${channel}, other nodes catch up at their reload: ${(error as Error).message}`);
    }
  }
}
