import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { RecordedChanges, RecordRow } from '../database/recorded-change';
import { SERVICE_CHANGE_CONDITION } from '../database/service-change-mark';
import { boundText, BOUNDS } from '../common/text';
import { UserRegistryApiKey } from './user-registry-api-key.entity';

/** A key of the active set: its SHA-256 (trimmed of char(64) padding) and what the set keeps of it. */
export interface ActiveKeyRow {
  hash: string;
  keyId: number;
  userRegistryId: number;
  display: string;
}

/** One noted use of a key: when, and the User-Agent it came with (null when it sent none). */
export interface KeyUse {
  usedDate: Date;
  userAgent: string | null;
}

/** What revoking found: the key's hash and display, and whether this call revoked it (false on a repeat). */
export interface RevokedKey {
  hash: string;
  display: string;
  name: string;
  changed: boolean;
}

/** Every query on UserRegistryApiKey. Only the SHA-256 of a key is ever stored or compared. */
@Injectable()
export class UserRegistryApiKeyRepository {
  /** A key's creation and its AdminChange row in one statement, generated from the entity. */
  private readonly recorded: RecordedChanges<UserRegistryApiKey>;

  constructor(@InjectRepository(UserRegistryApiKey) private readonly repository: Repository<UserRegistryApiKey>) {
    this.recorded = new RecordedChanges<UserRegistryApiKey>(repository.metadata);
  }

  /**
   * Stores a new key and its AdminChange row `record` (TargetId: the new key's Id) in one statement, in
   * autocommit: both or neither (what it buys: database/recorded-change.ts). The id it was given.
   */
  async createRecorded(
    values: Pick<UserRegistryApiKey, 'userRegistryId' | 'name' | 'description' | 'apiKey' | 'apiKeyDisplay' | 'createdDate' | 'createdUser'>,
    record: RecordRow,
  ): Promise<number> {
    const created = await this.recorded.insert(this.repository.manager, { values, record, fromRow: { targetId: 'id' } });
    return created.id;
  }

  /** The user's keys that are not revoked, oldest first. */
  findActiveByUser(userRegistryId: number): Promise<UserRegistryApiKey[]> {
    return this.repository.find({
      select: { id: true, name: true, description: true, apiKeyDisplay: true, createdDate: true, createdUser: true, lastUsedDate: true, lastUsedUserAgent: true },
      where: { userRegistryId, deleted: false },
      order: { id: 'ASC' },
    });
  }

  /** Every key of the user, the active ones first, then the revoked ones (the history), each oldest first. */
  findByUser(userRegistryId: number): Promise<UserRegistryApiKey[]> {
    return this.repository.find({
      select: {
        id: true, name: true, description: true, apiKeyDisplay: true, createdDate: true, createdUser: true, lastUsedDate: true,
        lastUsedUserAgent: true, deleted: true, deletedDate: true, deletedUser: true,
      },
      where: { userRegistryId },
      order: { deleted: 'ASC', id: 'ASC' },
    });
  }

  /** Every key that is not revoked (the active set's reload). */
  findActive(): Promise<ActiveKeyRow[]> {
    return this.activeQuery().getRawMany<ActiveKeyRow>().then(trimHashes);
  }

  /** The key with this SHA-256 if it is not revoked. */
  async findActiveByHash(hash: string): Promise<ActiveKeyRow | null> {
    const rows = trimHashes(await this.activeQuery().andWhere('k.apiKey = :hash', { hash }).getRawMany<ActiveKeyRow>());
    return rows[0] ?? null;
  }

  /**
   * Revokes key `keyId` of user `userRegistryId` if it is active; null when the user has no such key.
   * Raw SQL: lock, revoke and read back in one statement, so the revocation reaches the other nodes
   * one round trip sooner (bench/revocation.js: p99 162.9 ms before, 24.8 ms after, with the
   * announcement moved before the ServiceChange message; bench/RESULTS.md issue 3).
   */
  async revoke(keyId: number, userRegistryId: number, deletedDate: Date, deletedUser: string | null, tx?: EntityManager): Promise<RevokedKey | null> {
    const rows: RevokedKey[] = await (tx ?? this.repository.manager).query(
      `WITH key AS (
         SELECT "Id", "ApiKey", "ApiKeyDisplay", "Name", "Deleted" FROM "UserRegistryApiKey"
          WHERE "Id" = $1 AND "UserRegistryId" = $2 FOR UPDATE),
       revoked AS (
         UPDATE "UserRegistryApiKey" k SET "Deleted" = true, "DeletedDate" = $3, "DeletedUser" = $4
           FROM key WHERE k."Id" = key."Id" AND NOT key."Deleted" RETURNING k."Id")
       SELECT key."ApiKey" AS hash, key."ApiKeyDisplay" AS display, key."Name" AS name, EXISTS (SELECT 1 FROM revoked) AS changed FROM key`,
      [keyId, userRegistryId, deletedDate, deletedUser],
    );
    const row = rows[0];
    return row ? { ...row, hash: row.hash.trim() } : null;
  }

  /**
   * Moves LastUsedDate forward for every key used since the last write, together with the user agent
   * of that use, in one statement (never backwards: a slower node's older use overwrites neither the
   * date nor the device of a newer one). The agent is bounded here too, as every stored caller text
   * is. Raw SQL: an UPDATE … FROM unnest(ids, dates, agents) has no QueryBuilder form, and one UPDATE
   * per key would put a statement per used key on every write.
   */
  async recordLastUsed(uses: ReadonlyMap<number, KeyUse>): Promise<void> {
    const ids: number[] = [];
    const dates: Date[] = [];
    const agents: Array<string | null> = [];
    for (const [id, use] of uses) {
      ids.push(id);
      dates.push(use.usedDate);
      agents.push(boundText(use.userAgent, BOUNDS.userAgent) || null);
    }
    await this.repository.query(
      `UPDATE "UserRegistryApiKey" k SET "LastUsedDate" = u.used, "LastUsedUserAgent" = u.agent
         FROM unnest($1::int[], $2::timestamptz[], $3::varchar[]) AS u(id, used, agent)
        WHERE k."Id" = u.id AND (k."LastUsedDate" IS NULL OR k."LastUsedDate" < u.used) AND ${SERVICE_CHANGE_CONDITION}`,
      [ids, dates, agents],
    );
  }

  private activeQuery() {
    return this.repository
      .createQueryBuilder('k')
      .select('k.id', 'keyId')
      .addSelect('k.userRegistryId', 'userRegistryId')
      .addSelect('k.apiKey', 'hash')
      .addSelect('k.apiKeyDisplay', 'display')
      .where('NOT k.deleted');
  }
}

/** char(64) comes back padded only if a shorter value was stored; keys are compared trimmed. */
function trimHashes(rows: ActiveKeyRow[]): ActiveKeyRow[] {
  for (const row of rows) row.hash = row.hash.trim();
  return rows;
}
