import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * UserSession (contract 14): one row per sign-in, whatever the scheme; the JWT's `sid` names it.
 * Its Id is a random UUID made by the service, so a session id reveals nothing about how many exist.
 * Indexes serve the statements that run: the per-request lookup (the primary key), a user's open
 * sessions (list, end all), and the daily purge of ended ones.
 */
export class UserSession1764500000000 implements MigrationInterface {
  name = 'UserSession1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "UserSession" (
        "Id" uuid PRIMARY KEY,
        "UserRegistryId" integer NOT NULL REFERENCES "UserRegistry"("Id"),
        "TenantRegistryId" integer REFERENCES "TenantRegistry"("Id"),
        "AuthenticationTypeId" smallint NOT NULL,
        "CreatedDate" timestamptz NOT NULL,
        "LastSeenDate" timestamptz NOT NULL,
        "RemoteIp" varchar(64),
        "UserAgent" varchar(512),
        "EndedDate" timestamptz,
        "EndReasonId" smallint,
        "EndedByUser" varchar(256)
      )`);
    // A user's open sessions, newest first: the session lists and every "end all of this user".
    await q.query(
      `CREATE INDEX "IX_UserSession_User_Open" ON "UserSession" ("UserRegistryId", "CreatedDate" DESC) WHERE "EndedDate" IS NULL`,
    );
    // The daily purge: sessions ended before the retention horizon, and those never ended that
    // reached the absolute lifetime before it.
    await q.query(`CREATE INDEX "IX_UserSession_EndedDate" ON "UserSession" ("EndedDate") WHERE "EndedDate" IS NOT NULL`);
    await q.query(`CREATE INDEX "IX_UserSession_Open_CreatedDate" ON "UserSession" ("CreatedDate") WHERE "EndedDate" IS NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "UserSession"`);
  }
}
