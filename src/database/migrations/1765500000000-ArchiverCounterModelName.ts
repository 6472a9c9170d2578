import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Contract 17: ArchiverStagePerformanceCounter names its model too (EntityAnalysisModelName, from the
 * capture entry), so every page and series can show a model's name, not only its GUID. A nullable column
 * without a default: added to the catalogue only, no rewrite of the table, whatever its size; rows
 * written before it keep NULL.
 */
export class ArchiverCounterModelName1765500000000 implements MigrationInterface {
  name = 'ArchiverCounterModelName1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "ArchiverStagePerformanceCounter" ADD COLUMN "EntityAnalysisModelName" text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "ArchiverStagePerformanceCounter" DROP COLUMN "EntityAnalysisModelName"`);
  }
}
