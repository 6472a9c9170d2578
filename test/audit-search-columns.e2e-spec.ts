import { DataSource } from 'typeorm';
import { AUDIT_SEARCH_COLUMNS } from '../src/sign-in-trail/audit.tables';
import { dataSourceOptions } from '../src/database/data-source';
import { MIGRATIONS } from '../src/database/migrations';
import { createTestDatabase, TestDatabase } from './helpers/database';
import { AuthenticationTypeId, LogoutOutcomeId, LogoutReasonId } from '../src/sign-in-trail/audit.types';

/**
 * Issue 23: the audit search columns are listed once in src/sign-in-trail/audit.tables.ts, and once more in the
 * migration that stores their lowered join (1764400000000-AuditSearchText, never edited). This fails
 * when the two drift: a search column the table description names that the stored "SearchText" does
 * not hold (a search that could never match it), or one the trigger joins that the page does not say.
 */
describe('audit search columns (issue 23)', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    const migrated = new DataSource({ ...dataSourceOptions(db.url), migrations: MIGRATIONS });
    await migrated.initialize();
    await migrated.runMigrations({ transaction: 'each' });
    await migrated.destroy();
  });

  afterAll(async () => {
    await db.drop();
  });

  it.each(Object.entries(AUDIT_SEARCH_COLUMNS))('%s: the SearchText trigger joins exactly the columns the table description searches', async (table, columns) => {
    const [fn] = await db.query<{ body: string }>(`SELECT prosrc AS body FROM pg_proc WHERE proname = $1`, [`${table}_SearchText`]);
    expect(fn).toBeDefined();
    const expression = `lower(concat_ws(chr(31), ${columns.map((c) => `NEW."${c}"`).join(', ')}))`;
    expect(fn.body.replace(/\s+/g, ' ')).toContain(`NEW."SearchText" := ${expression};`);
  });

  it.each(Object.entries(AUDIT_SEARCH_COLUMNS))('%s: the SearchText of a new row is these columns lowered, in this order, under the trigram index', async (table, columns) => {
    const [index] = await db.query<{ def: string }>(`SELECT indexdef AS def FROM pg_indexes WHERE indexname = $1`, [`IX_${table}_SearchText_Trgm`]);
    expect(index.def).toMatch(/USING gin \("SearchText" gin_trgm_ops\)/);
    // Each column's value shows up in the stored text, lowered, in the listed order.
    const values = columns.map((c, i) => `Col${i}-${c}`);
    const base = table === 'UserLogin' ? { Failed: true, AuthenticationTypeId: AuthenticationTypeId.UserNamePassword } : { ReasonId: LogoutReasonId.UserLogout, OutcomeId: LogoutOutcomeId.Revoked };
    const names = [...Object.keys(base), ...columns];
    const params = [...Object.values(base), ...values];
    const [row] = await db.query<{ text: string }>(
      `INSERT INTO "${table}" (${names.map((n) => `"${n}"`).join(', ')}) VALUES (${params.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING "SearchText" AS text`,
      params,
    );
    expect(row.text).toBe(values.map((v) => v.toLowerCase()).join('\u001f'));
  });
});
