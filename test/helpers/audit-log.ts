import type { DataSource } from 'typeorm';
import { canonicalSql, sealableSql } from '../../src/audit-log/audited-rows.repository';
import type { SealedTableName } from '../../src/audit-log/canonical';
import type { TestDatabase } from './database';

/**
 * Runs `statements` in one transaction as the superuser with the append-only triggers off
 * (`session_replication_role = replica`): the tampering the audit log (contract 15) must reveal.
 */
export async function asSuperuser(db: TestDatabase, statements: Array<[string, unknown[]?]>): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SET LOCAL session_replication_role = replica');
    for (const [sql, params] of statements) await client.query(sql, params ?? []);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * Empties UserLogin and UserLogout the only way left (they are append-only, contract 15): as the
 * superuser, with triggers off, which is exactly the tampering the audit log exists to reveal. For
 * read tests that need the tables to hold only what they arrange; their waiting entries go too, so
 * the sealer does not report those rows as lost.
 */
export async function emptyAuditTrailsAsSuperuser(db: TestDatabase): Promise<void> {
  await asSuperuser(db, [[`TRUNCATE "UserLogin", "UserLogout"`], [`DELETE FROM "AuditPending"`]]);
}

/**
 * The canonical form of rows of `table` as PostgreSQL writes it (the sealer's canonicalSql) and
 * whether the sealer's sealableSql accepts them, by Id: what a test holds to canonicalRow.
 */
export async function canonicalInDatabase(db: DataSource, table: SealedTableName, ids: string[]): Promise<{ id: string; canonical: Buffer; sealable: boolean }[]> {
  if (ids.length === 0) return [];
  return (await db.query(
    `SELECT t."Id"::text AS "id", convert_to(${canonicalSql(table, 't')}, 'UTF8') AS "canonical", ${sealableSql(table, 't')} AS "sealable"
       FROM "${table}" t WHERE t."Id" = ANY($1::bigint[]) ORDER BY t."Id"`,
    [ids],
  )) as { id: string; canonical: Buffer; sealable: boolean }[];
}
