import type { Duplex } from 'node:stream';
import { DataSource, DataSourceOptions, MigrationExecutor } from 'typeorm';
import { withoutDeadlines } from './deadlines';
import { MIGRATIONS } from './migrations';

/** Key of the PostgreSQL advisory lock that serialises migrations across nodes starting together. */
const MIGRATION_LOCK_KEY = 7_206_310_451;
/** How often a node waiting for another node's migrations asks for the lock again. */
const MIGRATION_LOCK_POLL_MS = 200;

/** Pool options beyond the URL: idle timeout (DatabasePoolIdleTimeoutMilliseconds), the embedded stream. */
export interface PoolOptions {
  /** Milliseconds an unused connection stays open; 0 keeps it. */
  idleTimeoutMillis?: number;
  /** The embedded database's in-process connections (node-postgres `stream` option). */
  stream?: () => Duplex;
  /** The mark of the service's own registry changes (service-change-mark.ts), written after the migrations; node-postgres ignores it. */
  serviceMark?: string;
  /** The startup `options` as configured, before the pinned search path is added (database.module.ts); node-postgres ignores it. */
  configuredOptions?: string;
  /** Deadlines and the rest of node-postgres's pool and client options (see deadlines.ts). */
  [option: string]: unknown;
}

/**
 * TypeORM options for a PostgreSQL URL. `synchronize` is never on: the schema comes from migrations.
 * Entities are registered by feature modules through autoLoadEntities, so none are listed here.
 */
export function dataSourceOptions(url: string, poolSize = 10, pool: PoolOptions = {}): DataSourceOptions {
  const { url: plain, options } = splitStartupOptions(url);
  const startup = [options, pool.options].filter((o) => typeof o === 'string' && o !== '').join(' ');
  return {
    type: 'postgres',
    url: plain,
    synchronize: false,
    migrationsRun: false,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    extra: { max: poolSize, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 5_000, ...pool, ...(startup ? { options: startup } : {}) },
  };
}

/**
 * The URL without its `options` parameter, and that parameter. node-postgres lets a URL's `options`
 * replace the pool's, which would drop the session settings the service gives every connection (the
 * mark of its own changes, the pinned search path); the operator's come first, the service's after.
 */
export function splitStartupOptions(url: string): { url: string; options: string | null } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { url, options: null }; // not a URL node-postgres would read options from either
  }
  const options = parsed.searchParams.get('options');
  if (options === null) return { url, options: null };
  parsed.searchParams.delete('options');
  return { url: parsed.toString(), options };
}

/**
 * Runs pending migrations on one connection that first takes a session advisory lock, so two nodes
 * starting at once migrate one after the other and the second finds nothing left to do.
 */
export async function migrate(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  const connection: unknown = await runner.connect();
  try {
    // A migration may build an index for minutes, and the lock waits for another node's migrations.
    await withoutDeadlines(connection, (sql) => runner.query(sql), async () => {
      // Wait for the lock between statements, never inside one: a migration that builds an index
      // CONCURRENTLY waits for every transaction with an older snapshot, and a second node blocked in
      // pg_advisory_lock() would be one, waiting in turn for the first node's lock (a deadlock).
      while (!((await runner.query('SELECT pg_try_advisory_lock($1) AS locked', [MIGRATION_LOCK_KEY])) as { locked: boolean }[])[0].locked) {
        await new Promise((resolve) => setTimeout(resolve, MIGRATION_LOCK_POLL_MS));
      }
      try {
        const executor = new MigrationExecutor(dataSource, runner);
        executor.transaction = 'each';
        await executor.executePendingMigrations();
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      }
    });
  } finally {
    await runner.release();
  }
}
