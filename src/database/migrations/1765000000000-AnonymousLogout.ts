import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * AnonymousLogout (contract 13, service.md 2.4): when each client address last had a logout row
 * written without a session, shared by every node through the database when no Redis is configured,
 * so the once-a-minute rule holds across nodes. One row per address; rows older than a minute are
 * deleted once a minute.
 */
export class AnonymousLogout1765000000000 implements MigrationInterface {
  name = 'AnonymousLogout1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "AnonymousLogout" (
        "Address" varchar(64) PRIMARY KEY,
        "LastRowDate" timestamptz NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "AnonymousLogout"`);
  }
}
