import type { TestDatabase } from './database';

/**
 * Empties UserLogin and UserLogout the only way left (they are append-only, contract 15): as the
 * superuser, with triggers off (`session_replication_role = replica`), which is exactly the tampering
 * the audit log exists to reveal. For read tests that need the tables to hold only what they arrange;
 * their waiting entries go too, so the sealer does not report those rows as lost.
 */
export async function emptyAuditTrailsAsSuperuser(db: TestDatabase): Promise<void> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`SET LOCAL session_replication_role = replica`);
    await client.query(`TRUNCATE "UserLogin", "UserLogout"`);
    await client.query(`DELETE FROM "AuditPending"`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
