import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 22: an API key shows the device that last used it, as a session does. UserRegistryApiKey keeps
 * the User-Agent of the use its LastUsedDate records, bounded like every stored user agent (512,
 * contract 9). Nullable without a default: a catalogue change only, no rewrite; keys used before it
 * keep NULL until their next use.
 */
export class ApiKeyLastUsedUserAgent1766500000000 implements MigrationInterface {
  name = 'ApiKeyLastUsedUserAgent1766500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "UserRegistryApiKey" ADD COLUMN "LastUsedUserAgent" varchar(512)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "UserRegistryApiKey" DROP COLUMN "LastUsedUserAgent"`);
  }
}
