import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SignInThrottle (contract 13): failed sign-ins per client address in the current window, shared by
 * every node through the database when no Redis is configured. One row per address; a window starts
 * at its first failure and rows of windows that ended are deleted once a minute.
 */
export class SignInThrottle1764200000000 implements MigrationInterface {
  name = 'SignInThrottle1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "SignInThrottle" (
        "Address" varchar(64) PRIMARY KEY,
        "WindowStart" timestamptz NOT NULL,
        "FailureCount" integer NOT NULL
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "SignInThrottle"`);
  }
}
