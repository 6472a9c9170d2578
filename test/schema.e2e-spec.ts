import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from './helpers/app';

/**
 * Entities and migrations describe the same schema twice; this keeps them from drifting. The service
 * migrates a fresh database with its real migrations, then TypeORM compares its entity metadata with
 * what is in the database: every table has an entity, every entity a table, and the schema diff
 * (what `synchronize` would run) is empty. Indexes TypeORM cannot describe (DESC, INCLUDE, expression,
 * GIN trigram) are declared by name with `synchronize: false`, so they are checked to exist by name.
 */
describe('entities and migrations agree', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has an entity for every table and a table for every entity', async () => {
    const dataSource = t.app.get(DataSource);
    const tables = await t.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'migrations'
          -- A partition is part of its table (contract 16), not a table of its own.
          AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', table_schema, table_name)::regclass)
        ORDER BY 1`,
    );
    const entities = dataSource.entityMetadatas.map((m) => m.tableName).sort();
    expect(entities).toEqual(tables.map((r) => r.table_name));
  });

  it('has no schema difference: synchronize would run nothing', async () => {
    const dataSource = t.app.get(DataSource);
    const diff = await dataSource.driver.createSchemaBuilder().log();
    expect(diff.upQueries.map((q) => q.query)).toEqual([]);
  });

  it('names every index of the database on its entity', async () => {
    const dataSource = t.app.get(DataSource);
    const indexes = await t.db.query<{ tablename: string; indexname: string }>(
      `SELECT i.tablename, i.indexname FROM pg_indexes i
        WHERE i.schemaname = 'public' AND i.tablename <> 'migrations'
          AND NOT (SELECT relispartition FROM pg_class WHERE oid = format('%I.%I', i.schemaname, i.tablename)::regclass)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.contype IN ('p', 'u'))
        ORDER BY i.tablename || '.' || i.indexname COLLATE "C"`,
    );
    const declared = dataSource.entityMetadatas
      .flatMap((m) => m.indices.map((i) => ({ tablename: m.tableName, indexname: i.name })))
      .sort((a, b) => (a.tablename + '.' + a.indexname < b.tablename + '.' + b.indexname ? -1 : 1));
    expect(declared).toEqual(indexes);
  });
});
