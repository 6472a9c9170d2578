import { Logger } from '@nestjs/common';
import { mkdirSync } from 'node:fs';
import type { Duplex } from 'node:stream';
import { resolve } from 'node:path';
import { embeddedDirectory, lockDataDirectory } from './data-directory-lock';
import { PgliteBridge } from './pglite-bridge';

/** A running embedded PostgreSQL: PGlite under DataDirectory, served in-process to the ordinary pg driver. */
export interface EmbeddedPostgres {
  /** What node-postgres is given; the host is never dialled, every connection goes through `stream`. */
  connectionString: string;
  /** node-postgres's `stream` option: a new connection to the embedded backend per call. */
  stream: () => Duplex;
  /** Connections currently open. */
  readonly connections: number;
  /** Cuts every connection from the database side (as a server restart would); the pool reconnects. */
  disconnectAll(): void;
  stop(): Promise<void>;
}

/**
 * Starts PGlite on `<dataDirectory>/pglite`, after taking that directory's lock (one process per
 * directory). PGlite is one PostgreSQL backend, one session: the bridge gives it to the pool's
 * connections in turns with a namespace of prepared statements each (see pglite-bridge.ts). No port
 * is opened, so no other local user or process can reach this database. For one node and for trying
 * the service, not for production load.
 */
export async function startEmbeddedPostgres(dataDirectory: string): Promise<EmbeddedPostgres> {
  const logger = new Logger('EmbeddedPostgres');
  const directory = embeddedDirectory(dataDirectory);
  mkdirSync(resolve(dataDirectory), { recursive: true });
  const lock = lockDataDirectory(directory);
  try {
    mkdirSync(directory, { recursive: true });
    // Loaded only in embedded mode (its CommonJS build), so a node on a real server never loads PGlite.
    const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
    const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as typeof import('@electric-sql/pglite/contrib/pg_trgm');
    const db = await PGlite.create(directory, { extensions: { pg_trgm } });
    const bridge = new PgliteBridge(db);
    logger.log(`embedded PostgreSQL (PGlite) at ${directory}`);
    return {
      connectionString: 'postgres://postgres@localhost/postgres',
      stream: bridge.stream,
      get connections() {
        return bridge.connections;
      },
      disconnectAll: () => bridge.disconnectAll(),
      async stop() {
        try {
          await bridge.stop();
          await db.close();
        } finally {
          lock.release();
        }
      },
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}
