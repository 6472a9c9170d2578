import { Client, ClientConfig } from 'pg';
import { quote } from './recorded-change';

/**
 * The service's sessions on a PostgreSQL server name their tables without a schema, so the search
 * path decides which tables they are. The default path starts with `"$user"`: a database user who may
 * create schemas could make one named after the service's role, holding a "UserLogin" or "AuditLeaf"
 * of their own, and every read and write of the service (the outside-the-log check too) would go to
 * it. So each session's path is pinned at connection start to the one schema that holds the service's
 * tables, with the temporary schema last (a session's temporary tables come first otherwise).
 *
 * That schema is found once, before the pool opens, on the path the role would have had (its own
 * setting, or ConnectionString's `options`): the schema of that path holding both "migrations" and
 * "UserLogin" (present since the first migration), or on a first install the schema the migrations
 * will create them in (current_schema()). Two such schemas on the path: the service cannot tell its
 * own and refuses to start (SearchPathAmbiguous). The embedded database has no other users.
 */
export class SearchPathAmbiguous extends Error {
  constructor(schemas: string[]) {
    super(
      `the service's tables are in more than one schema of the search path (${schemas.map((s) => `"${s}"`).join(', ')}): ` +
        'give the service a search_path that holds only its own (the role\'s setting, or options=-c search_path=… in ConnectionString)',
    );
  }
}

export interface ServiceSchema {
  /** The schema every session is pinned to; null when no schema of the path exists (the migrations then say so). */
  schema: string | null;
  /** The schema first on the path when it is not the service's (a warning: something came before it). */
  before: string | null;
}

/** Finds the service's schema (see above) on one short-lived connection with the pool's deadlines. */
export async function findServiceSchema(config: ClientConfig): Promise<ServiceSchema> {
  const client = new Client(config);
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ current: string | null; holding: string[] }>(
      `SELECT current_schema() AS "current",
              ARRAY(SELECT p.name::text FROM unnest(current_schemas(false)) WITH ORDINALITY AS p(name, at)
                     WHERE EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = p.name AND c.relname = 'migrations')
                       AND EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = p.name AND c.relname = 'UserLogin')
                     ORDER BY p.at) AS "holding"`,
    );
    const [{ current, holding }] = rows;
    if (holding.length > 1) throw new SearchPathAmbiguous(holding);
    const schema = holding[0] ?? current;
    return { schema, before: schema !== null && current !== null && current !== schema ? current : null };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * node-postgres's `options` startup parameter that pins a session's search path to `schema`, the
 * temporary schema last. The value is a quoted identifier; in `options`, a space or backslash is
 * escaped with a backslash.
 */
export function searchPathStartupOption(schema: string): string {
  return `-c search_path=${`${quote(schema)},pg_temp`.replace(/[\\ ]/g, (c) => `\\${c}`)}`;
}
