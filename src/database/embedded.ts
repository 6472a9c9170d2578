import { Logger } from '@nestjs/common';
import type { Duplex } from 'node:stream';
import { ensurePrivateDirectory } from '../common/private-file';
import { prepareDataDirectory, preparedMessage } from '../config/data-directory';
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
  // main.ts has done this already; an application built in-process (tests, tools) gets it here.
  const prepared = preparedMessage(prepareDataDirectory(dataDirectory));
  if (prepared) new Logger('DataDirectory').log(prepared);
  const lock = lockDataDirectory(directory);
  try {
    ensurePrivateDirectory(directory);
    // Loaded only in embedded mode (its CommonJS build), so a node on a real server never loads PGlite.
    const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
    const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as typeof import('@electric-sql/pglite/contrib/pg_trgm');
    const db = await PGlite.create({ fs: privateNodeFs(directory), extensions: { pg_trgm } });
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

/** Permission bits only the owner keeps. */
const OWNER_ONLY = ~0o077;

/**
 * PGlite's file system on the host (its NodeFS), for the service's user only. Emscripten's NODEFS
 * passes modes to the host itself: it creates each file with the mode the wasm side asked for and
 * then chmods it to that mode (0666 for the files PGlite's JavaScript writes, 0644 for some of
 * PostgreSQL's), which no umask can narrow: 969 world-writable files in a fresh install (issue 25).
 * Every mode NODEFS gives the host (mknod, chmod by path, chmod of an open file) loses its group and
 * other bits here, in this database's own Emscripten module, before the data directory is mounted.
 */
function privateNodeFs(directory: string): import('@electric-sql/pglite/nodefs').NodeFS {
  const { NodeFS } = require('@electric-sql/pglite/nodefs') as typeof import('@electric-sql/pglite/nodefs');
  type Attributes = { mode?: number } | undefined;
  const narrow = (attributes: Attributes): Attributes =>
    attributes && typeof attributes.mode === 'number' ? { ...attributes, mode: attributes.mode & OWNER_ONLY } : attributes;
  class PrivateNodeFS extends NodeFS {
    override async init(pg: Parameters<InstanceType<typeof NodeFS>['init']>[0], options: Parameters<InstanceType<typeof NodeFS>['init']>[1]) {
      const ownerOnly = (mod: any) => {
        const nodefs = mod.FS.filesystems.NODEFS;
        const { mknod, setattr } = nodefs.node_ops;
        const streamSetattr = nodefs.stream_ops.setattr;
        nodefs.node_ops.mknod = (parent: unknown, name: string, mode: number, dev: number) => mknod(parent, name, mode & OWNER_ONLY, dev);
        nodefs.node_ops.setattr = (node: unknown, attributes: Attributes) => setattr(node, narrow(attributes));
        nodefs.stream_ops.setattr = (stream: unknown, attributes: Attributes) => streamSetattr(stream, narrow(attributes));
      };
      // Runs before NodeFS's own step, which mounts the directory.
      return super.init(pg, { ...options, preRun: [...(options.preRun ?? []), ownerOnly] });
    }
  }
  return new PrivateNodeFS(directory);
}
