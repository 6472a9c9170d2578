import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * DataDirectory is for the service's user only (issue 25): it holds the embedded database (every
 * password and API key hash, the audit trail), the generated secrets, the spool and the signing key.
 * PostgreSQL refuses a data directory others can read; this service, which replaces it for one node,
 * makes its own private instead, and refuses to start when it cannot.
 */
export class DataDirectoryRefused extends Error {}

export interface DataDirectoryPrepared {
  /** Absolute path. */
  directory: string;
  /** Paths (the directory included) whose group and other permissions were taken away. */
  tightened: number;
  /** Created by this start. */
  created: boolean;
}

const ownUid = (): number | null => (typeof process.geteuid === 'function' ? process.geteuid() : null);
const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

/**
 * Creates DataDirectory 0700, or takes group and other permissions away from it and from everything
 * in it (not following links), so no other local user can read or change what is there. Throws
 * DataDirectoryRefused, one line naming the directory and the fix, when it cannot:
 * - the directory (or something in it) belongs to another user: this user cannot make it private,
 *   and a directory someone else controls cannot keep this service's secrets (root could write
 *   there, but the check is on the owner, not on what root can do);
 * - it is on a read-only mount, or cannot be created;
 * - it is a shared place (sticky, such as /tmp) or the root: taking other users'
 *   permissions away there would break them; the service needs a directory of its own;
 * - a symbolic link is inside it: the service never writes or reads its files through a link, and
 *   refusing names the link for an operator instead of silently replacing something planted there.
 */
export function prepareDataDirectory(dataDirectory: string): DataDirectoryPrepared {
  const directory = resolve(dataDirectory);
  const fix = 'or set DataDirectory to a directory of its own';
  if (directory === '/') throw new DataDirectoryRefused(`DataDirectory is the root directory; ${fix}`);
  let created = false;
  try {
    statSync(directory);
  } catch (error) {
    if (code(error) !== 'ENOENT') throw new DataDirectoryRefused(`DataDirectory ${directory} cannot be read (${code(error)}); ${fix}`);
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      created = true;
    } catch (mkdirError) {
      throw new DataDirectoryRefused(`DataDirectory ${directory} cannot be created (${code(mkdirError)}): create it for the user this service runs as, ${fix}`);
    }
  }
  // The directory itself may be a link an operator made (to another disk): it is followed. Links
  // inside it are not (see walk).
  const stats = statSync(directory);
  if (!stats.isDirectory()) throw new DataDirectoryRefused(`DataDirectory ${directory} is not a directory; ${fix}`);
  const uid = ownUid();
  if (uid !== null && stats.uid !== uid) {
    throw new DataDirectoryRefused(
      `DataDirectory ${directory} belongs to user ${stats.uid}, not to the user this service runs as (${uid}): chown -R ${uid} ${directory}, ${fix}`,
    );
  }
  if (stats.mode & 0o1000) {
    // The sticky bit marks a place shared by design (/tmp): making it private would break its other users.
    throw new DataDirectoryRefused(`DataDirectory ${directory} is a shared directory (mode ${(stats.mode & 0o7777).toString(8)}); ${fix}`);
  }
  try {
    accessSync(directory, constants.W_OK);
  } catch (error) {
    throw new DataDirectoryRefused(`DataDirectory ${directory} is not writable (${code(error)}): mount it read-write, ${fix}`);
  }
  let tightened = 0;
  const tighten = (path: string, mode: number) => {
    if ((mode & 0o077) === 0) return;
    try {
      chmodSync(path, mode & 0o7700);
    } catch (error) {
      if (code(error) === 'ENOENT') return; // removed meanwhile
      throw new DataDirectoryRefused(
        `DataDirectory ${directory}: cannot take group and other permissions away from ${path} (${code(error)}): chown -R ${uid ?? 'the service user'} ${directory}, ${fix}`,
      );
    }
    tightened++;
  };
  tighten(directory, stats.mode);
  walk(directory, uid, (path, entry) => tighten(path, entry.mode), directory, fix);
  return { directory, tightened, created };
}

/** Every path under `folder`, depth first, without following links (a link refuses the start). */
function walk(folder: string, uid: number | null, visit: (path: string, stats: import('node:fs').Stats) => void, root: string, fix: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch (error) {
    if (code(error) === 'ENOENT') return; // removed meanwhile (a running embedded database's temporary file)
    throw new DataDirectoryRefused(`DataDirectory ${root}: cannot read ${folder} (${code(error)}); ${fix}`);
  }
  for (const name of names) {
    const path = join(folder, name);
    let stats;
    try {
      stats = lstatSync(path);
    } catch (error) {
      if (code(error) === 'ENOENT') continue;
      throw error;
    }
    if (stats.isSymbolicLink()) {
      throw new DataDirectoryRefused(
        `DataDirectory ${root} holds a symbolic link, ${path}; the service never writes or reads its files through a link: remove it`,
      );
    }
    if (uid !== null && stats.uid !== uid) {
      throw new DataDirectoryRefused(
        `DataDirectory ${root} holds ${path}, which belongs to user ${stats.uid}, not to the user this service runs as (${uid}): chown -R ${uid} ${root}, ${fix}`,
      );
    }
    visit(path, stats);
    if (stats.isDirectory()) walk(path, uid, visit, root, fix);
  }
}

/** The INFO line of a start that had to make DataDirectory private (null when nothing changed). */
export function preparedMessage(prepared: DataDirectoryPrepared): string | null {
  if (prepared.tightened === 0) return null;
  return `DataDirectory ${prepared.directory} was readable or writable by other users: took group and other permissions away from ${prepared.tightened} paths (it is for this service's user only)`;
}

/**
 * At the start of a process (main.ts, the demo), before anything is written: the files this process
 * creates are its user's only whatever umask it was given (the embedded database's own files are
 * narrowed in embedded.ts; every file the service writes itself sets 0600 on its own), DataDirectory
 * is made private, and a start that cannot do so ends with one line (EX_CONFIG). `log` receives the
 * INFO line when permissions were taken away.
 */
export function secureDataDirectoryOrExit(settings: { dataDirectory: string }, log: (message: string) => void): void {
  process.umask(0o077);
  try {
    const message = preparedMessage(prepareDataDirectory(settings.dataDirectory));
    if (message) log(message);
  } catch (error) {
    if (!(error instanceof DataDirectoryRefused)) throw error;
    process.stderr.write(`Refusing to start: ${error.message}\n`);
    process.exit(78);
  }
}
