import { Logger } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';

/** A running embedded PostgreSQL: PGlite under DataDirectory, served on loopback to the ordinary pg driver. */
export interface EmbeddedPostgres {
  connectionString: string;
  stop(): Promise<void>;
}

/**
 * Starts PGlite on `<dataDirectory>/pglite` behind @electric-sql/pglite-socket on a free loopback port.
 * The socket server multiplexes several pg connections onto PGlite's single session one query at a
 * time; that is why this mode is for one node and for trying the service, not for production load.
 */
export async function startEmbeddedPostgres(dataDirectory: string): Promise<EmbeddedPostgres> {
  const logger = new Logger('EmbeddedPostgres');
  const directory = resolve(dataDirectory, 'pglite');
  mkdirSync(directory, { recursive: true });
  // Loaded only in embedded mode (their CommonJS builds), so a node on a real server never loads PGlite.
  const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as typeof import('@electric-sql/pglite/contrib/pg_trgm');
  const { PGLiteSocketServer } = require('@electric-sql/pglite-socket') as typeof import('@electric-sql/pglite-socket');
  const db = await PGlite.create(directory, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 16 });
  await server.start();
  const address = (server as unknown as { server?: { address(): { port: number } } }).server?.address();
  const port = address?.port ?? Number((server as unknown as { port?: number }).port);
  if (!port) throw new Error('embedded PostgreSQL did not report its port');
  logger.log(`embedded PostgreSQL (PGlite) at ${directory}, served on 127.0.0.1:${port}`);
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
