import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { LastUse } from '../common/last-use-writer';
import { SIGN_IN_ACCOUNT_COLUMNS, SIGN_IN_ACCOUNT_JOINS, SignInAccountRow } from '../users/user-registry.repository';
import { NO_FLUSH_WAIT, TakenChallenge } from './passkey-challenge.repository';
import { UserPasskey } from './user-passkey.entity';

/** Most passkeys one user may hold at once: the exclude list and the lists stay small. */
export const PASSKEYS_PER_USER = 25;

/** A passkey as a sign-in needs it, with its user's name (the flow looks the account up by name). */
export interface PasskeyCredential {
  id: number;
  userRegistryId: number;
  userName: string;
  credentialId: Buffer;
  publicKey: Buffer;
  signCount: number;
  transports: string | null;
  backedUp: boolean;
}

/** What a passkey sign-in's first statement found: its challenge taken, the credential, its user's account. */
export interface SignInLookup {
  /** The challenge row deleted (null: no such row); whether it is acceptable is acceptChallenge's. */
  challenge: TakenChallenge | null;
  credential: PasskeyCredential | null;
  /** The credential's user when not deleted, with every state a sign-in checks (null: none). */
  account: SignInAccountRow | null;
}

export type NewPasskey = Pick<
  UserPasskey,
  'userRegistryId' | 'credentialId' | 'publicKey' | 'signCount' | 'transports' | 'aaguid' | 'backupEligible' | 'backedUp' | 'name' | 'createdDate'
>;

/** What a removal answers of the passkey it removed. */
export type RemovedPasskey = Pick<UserPasskey, 'id' | 'userRegistryId' | 'name' | 'backupEligible' | 'backedUp' | 'aaguid'>;

const LISTED = {
  id: true, userRegistryId: true, name: true, createdDate: true, lastUsedDate: true, lastUsedUserAgent: true, backupEligible: true, backedUp: true, aaguid: true,
} as const;

/** Every statement on UserPasskey. Removed passkeys are soft-deleted and never answer again. */
@Injectable()
export class UserPasskeyRepository {
  constructor(@InjectRepository(UserPasskey) private readonly repository: Repository<UserPasskey>) {}

  private on(tx?: EntityManager): Repository<UserPasskey> {
    return tx ? tx.getRepository(UserPasskey) : this.repository;
  }

  /**
   * The active passkey with this credential id and its user's name (one read; the user row's state is
   * the flow's to check). Deleted users keep their name here: the flow then finds no account.
   */
  async findActiveCredential(credentialId: Buffer): Promise<PasskeyCredential | null> {
    const rows: PasskeyCredential[] = await this.repository.query(
      `SELECT p."Id" AS id, p."UserRegistryId" AS "userRegistryId", u."Name" AS "userName", p."CredentialId" AS "credentialId",
              p."PublicKey" AS "publicKey", p."SignCount"::float8 AS "signCount", p."Transports" AS transports,
              p."BackedUp" AS "backedUp"
         FROM "UserPasskey" p JOIN "UserRegistry" u ON u."Id" = p."UserRegistryId"
        WHERE p."CredentialId" = $1 AND NOT p."Deleted"`,
      [credentialId],
    );
    return rows[0] ?? null;
  }

  /**
   * A passkey sign-in's reads in one statement (one round trip where there were three, bench/RESULTS.md
   * issue 31): takes the challenge `challengeId` (DELETE … RETURNING: gone whatever follows, once
   * however many nodes race for it), and reads the active passkey `credentialId` with its user's
   * sign-in state (SIGN_IN_ACCOUNT_COLUMNS, the flow's own account read). Its commit does not wait for
   * the WAL flush (NO_FLUSH_WAIT: the sign-in's UserLogin row, written before any answer, flushes it).
   */
  async takeForSignIn(challengeId: string | null, credentialId: Buffer | null): Promise<SignInLookup> {
    const rows: Array<Record<string, unknown>> = await this.repository.query(
      `WITH taken AS (
         DELETE FROM "PasskeyChallenge" WHERE "Id" = $1::uuid
         RETURNING "Challenge" AS challenge, "ExpiresDate" AS expires, "Purpose" AS purpose, "UserRegistryId" AS owner
       ), credential AS (
         SELECT p."Id" AS "passkeyId", p."UserRegistryId" AS "passkeyUser", n."Name" AS "userName", p."CredentialId" AS "credentialId",
                p."PublicKey" AS "publicKey", p."SignCount"::float8 AS "signCount", p."Transports" AS transports, p."BackedUp" AS "backedUp"
           FROM "UserPasskey" p JOIN "UserRegistry" n ON n."Id" = p."UserRegistryId"
          WHERE p."CredentialId" = $2::bytea AND NOT p."Deleted"
       )
       SELECT t.challenge, t.expires, t.purpose, t.owner, c.*, a.*
         FROM (SELECT 1 WHERE ${NO_FLUSH_WAIT}) one
         LEFT JOIN taken t ON true
         LEFT JOIN credential c ON true
         LEFT JOIN LATERAL (
           SELECT ${SIGN_IN_ACCOUNT_COLUMNS} FROM "UserRegistry" u ${SIGN_IN_ACCOUNT_JOINS}
            WHERE u."Id" = c."passkeyUser" AND NOT u."Deleted"
         ) a ON true`,
      [challengeId, credentialId],
    );
    const row = rows[0] ?? {};
    const challenge = row.challenge ? ({ challenge: row.challenge, expires: row.expires, purpose: row.purpose, owner: row.owner } as TakenChallenge) : null;
    const credential =
      row.passkeyId != null
        ? ({
            id: row.passkeyId,
            userRegistryId: row.passkeyUser,
            userName: row.userName,
            credentialId: row.credentialId,
            publicKey: row.publicKey,
            signCount: row.signCount,
            transports: row.transports,
            backedUp: row.backedUp,
          } as PasskeyCredential)
        : null;
    const account =
      row.id != null
        ? ({
            id: row.id,
            name: row.name,
            passwordHash: row.passwordHash,
            active: row.active,
            passwordLocked: row.passwordLocked,
            passwordExpiryDate: row.passwordExpiryDate,
            wirePasswordHash: row.wirePasswordHash,
            tenantRegistryId: row.tenantRegistryId,
          } as SignInAccountRow)
        : null;
    return { challenge, credential, account };
  }

  /** The user's active passkeys, oldest first. */
  listActive(userRegistryId: number): Promise<UserPasskey[]> {
    return this.repository.find({ select: LISTED, where: { userRegistryId, deleted: false }, order: { id: 'ASC' } });
  }

  /** The credential ids (and transports) of the user's active passkeys: the exclude and allow lists. */
  credentialsOf(userRegistryId: number): Promise<Array<Pick<UserPasskey, 'credentialId' | 'transports'>>> {
    return this.repository.find({ select: { credentialId: true, transports: true }, where: { userRegistryId, deleted: false }, order: { id: 'ASC' } });
  }

  /** True when the user holds an active passkey (the second factor is then asked for). */
  hasActive(userRegistryId: number): Promise<boolean> {
    return this.repository.exists({ where: { userRegistryId, deleted: false } });
  }

  /**
   * Stores a new passkey inside the registration's transaction, after the user's row is locked so
   * two registrations cannot both pass the bound. Null when the user holds the most allowed or the
   * credential id was ever registered (by anyone).
   */
  async create(values: NewPasskey, tx: EntityManager): Promise<UserPasskey | null> {
    await tx.query(`SELECT 1 FROM "UserRegistry" WHERE "Id" = $1 FOR UPDATE`, [values.userRegistryId]);
    if ((await this.on(tx).count({ where: { userRegistryId: values.userRegistryId, deleted: false } })) >= PASSKEYS_PER_USER) return null;
    const { identifiers } = await this.on(tx).createQueryBuilder().insert().values(values).orIgnore().execute();
    const id = identifiers[0]?.id as number | undefined;
    if (id === undefined) return null;
    return this.on(tx).findOneOrFail({ select: LISTED, where: { id } });
  }

  async rename(userRegistryId: number, id: number, name: string): Promise<UserPasskey | null> {
    const { affected } = await this.repository.update({ id, userRegistryId, deleted: false }, { name });
    if (!affected) return null;
    return this.repository.findOne({ select: LISTED, where: { id, userRegistryId, deleted: false } });
  }

  /**
   * Removes one active passkey of the user in one statement, answering what it was (for its
   * AdminChange row); null when there was none such.
   */
  async remove(userRegistryId: number, id: number, now: Date, tx: EntityManager): Promise<RemovedPasskey | null> {
    // One statement answering the row it changed (UPDATE … RETURNING has no repository form).
    const [rows] = (await tx.query(
      `UPDATE "UserPasskey" SET "Deleted" = true, "DeletedDate" = $3
        WHERE "Id" = $1 AND "UserRegistryId" = $2 AND NOT "Deleted"
        RETURNING "Id" AS id, "UserRegistryId" AS "userRegistryId", "Name" AS name, "BackupEligible" AS "backupEligible",
                  "BackedUp" AS "backedUp", "Aaguid" AS aaguid`,
      [id, userRegistryId, now],
    )) as [RemovedPasskey[], number];
    const [row] = rows;
    return row ?? null;
  }

  /**
   * Moves the stored counter forward to `counter` only if it is above the stored one, in one
   * statement, so two assertions with the same counter racing each other cannot both pass. Also keeps
   * the backed-up flag as last seen. False: the counter did not go forward (a cloned authenticator).
   */
  async advanceCounter(id: number, counter: number, backedUp: boolean): Promise<boolean> {
    const result = await this.repository
      .createQueryBuilder()
      .update(UserPasskey)
      .set({ signCount: String(counter), backedUp })
      .where('"Id" = :id AND "SignCount" < :counter AND NOT "Deleted"', { id, counter })
      // The sign-in's UserLogin row, committed before any answer, flushes it (NO_FLUSH_WAIT).
      .andWhere(NO_FLUSH_WAIT)
      .returning('"Id"')
      .execute();
    const rows = result.raw as unknown[];
    return rows.length === 1;
  }

  /** Keeps the backed-up flag as last seen (a counter of 0 changes nothing else). */
  async noteBackedUp(id: number, backedUp: boolean): Promise<void> {
    await this.repository.update({ id, backedUp: !backedUp }, { backedUp });
  }

  /** Writes noted uses in one statement (off the request path). */
  async recordLastUsed(uses: Map<number, LastUse>): Promise<void> {
    if (uses.size === 0) return;
    const ids = [...uses.keys()];
    await this.repository.query(
      `UPDATE "UserPasskey" p SET "LastUsedDate" = u.used, "LastUsedUserAgent" = u.agent
         FROM unnest($1::int[], $2::timestamptz[], $3::varchar[]) AS u(id, used, agent)
        WHERE p."Id" = u.id AND (p."LastUsedDate" IS NULL OR p."LastUsedDate" < u.used)`,
      [ids, ids.map((id) => uses.get(id)!.usedDate), ids.map((id) => uses.get(id)!.userAgent)],
    );
  }
}
