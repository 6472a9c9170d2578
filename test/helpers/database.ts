import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';

/** The PostgreSQL server the suite runs against (real, never mocked). */
export const SERVER_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  name: string;
  url: string;
  /** A pool on the test database, for arranging rows and asserting what the service wrote. */
  pool: Pool;
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A fresh, empty database per test file; the service's own migrations create the schema. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tm_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new Pool({ connectionString: SERVER_URL, max: 1 });
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 4 });
  // An idle connection ended by the server (DROP DATABASE … WITH (FORCE) at the end of a file) is
  // reported on the pool; without a listener Node would turn it into an uncaught error that fails
  // the whole file after its tests passed.
  pool.on('error', () => undefined);
  return {
    name,
    url: url.toString(),
    pool,
    async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
      return (await pool.query(sql, params)).rows as T[];
    },
    async drop() {
      await pool.end();
      const dropper = new Pool({ connectionString: SERVER_URL, max: 1 });
      await dropper.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => undefined);
      await dropper.end();
    },
  };
}
