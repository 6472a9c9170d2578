import { MigrationInterface, QueryRunner } from 'typeorm';

/** The columns `search` of GET /api/AdminChange matches (contract 18: the actor, the target name, Changes), frozen here. */
const COLUMNS = ['CreatedUser', 'TargetName', 'Changes'];

/**
 * AdminChange gets the stored lowered search text UserLogin and UserLogout have (migration
 * AuditSearchText): `lower()` of the searched columns joined by U+001F, kept by a BEFORE INSERT
 * trigger, with one trigram index, so `search` is one LIKE instead of an ILIKE per column. Not part of
 * the row's canonical form. The table is new (migration AdminChange), so no row needs filling.
 */
export class AdminChangeSearchText1767000000001 implements MigrationInterface {
  name = 'AdminChangeSearchText1767000000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "AdminChange" ADD COLUMN "SearchText" text`);
    await q.query(
      `CREATE FUNCTION "AdminChange_SearchText"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN NEW."SearchText" := lower(concat_ws(chr(31), ${COLUMNS.map((c) => `NEW."${c}"`).join(', ')})); RETURN NEW; END $$`,
    );
    await q.query(`CREATE TRIGGER "AdminChange_SearchText" BEFORE INSERT ON "AdminChange" FOR EACH ROW EXECUTE FUNCTION "AdminChange_SearchText"()`);
    await q.query(`CREATE INDEX "IX_AdminChange_SearchText_Trgm" ON "AdminChange" USING gin ("SearchText" gin_trgm_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IX_AdminChange_SearchText_Trgm"`);
    await q.query(`DROP TRIGGER "AdminChange_SearchText" ON "AdminChange"`);
    await q.query(`DROP FUNCTION "AdminChange_SearchText"()`);
    await q.query(`ALTER TABLE "AdminChange" DROP COLUMN "SearchText"`);
  }
}
