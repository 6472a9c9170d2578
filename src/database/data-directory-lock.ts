import { closeSync, unlinkSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { createPrivateFile, readPrivateFile } from '../common/private-file';

/** Thrown when another process (or another application in this one) has the embedded database open. */
export class DataDirectoryInUse extends Error {}

export interface DataDirectoryLock {
  /** The lock file, `<directory>.pid`. */
  readonly path: string;
  release(): void;
}

/** Directories this process holds, so a second application in the same process is refused too. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderOf(path: string): number | null | 'unreadable' {
  // Never through a link (a link planted as the lock file is refused, not read).
  const text = readPrivateFile(path);
  if (text === null) return null;
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : 'unreadable';
}

/**
 * The live process other than this one that holds the directory's lock, if any: lets the start
 * refuse with one line before building anything (lockDataDirectory still decides, atomically).
 */
export function dataDirectoryHolder(directory: string): number | null {
  const holder = holderOf(`${directory}.pid`);
  return typeof holder === 'number' && holder !== process.pid && alive(holder) ? holder : null;
}

/** The one-line refusal naming the directory and its holder. */
export function inUseMessage(directory: string, pid: number): string {
  return `the embedded database ${directory} is in use by process ${pid} (lock file ${directory}.pid); stop that process first, or set ConnectionString`;
}

/**
 * Takes the lock of an embedded database directory: the file `<directory>.pid` holding this
 * process's id, created exclusively. PGlite itself does not stop a second process from opening the
 * same files, and two writers corrupt them. A lock whose process is gone (killed, crashed, or a
 * container restarted with the same pid) is stale and taken over, as PostgreSQL does with its own
 * postmaster.pid; a live holder is refused at once, naming the directory and the process.
 */
export function lockDataDirectory(directory: string): DataDirectoryLock {
  const path = `${directory}.pid`;
  if (held.has(directory)) {
    throw new DataDirectoryInUse(`the embedded database ${directory} is already open in this process (pid ${process.pid})`);
  }
  for (let attempt = 0; attempt < 20; attempt++) {
    let fd: number;
    try {
      // O_EXCL, 0600 whatever the umask, never through a link.
      fd = createPrivateFile(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderOf(path);
      if (holder === null) continue; // released meanwhile
      if (holder === 'unreadable') {
        // Another process may be between creating the file and writing its pid: look again shortly.
        if (attempt < 19) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
          continue;
        }
        throw new DataDirectoryInUse(
          `the embedded database ${directory} has a lock file without a process id (${path}); remove it if no service is running`,
        );
      }
      if (holder !== process.pid && alive(holder)) {
        throw new DataDirectoryInUse(inUseMessage(directory, holder));
      }
      // Stale: its process is gone (or it is our own pid, left by an earlier life of this container).
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if ((unlinkError as NodeJS.ErrnoException).code !== 'ENOENT') throw unlinkError;
      }
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n${new Date().toISOString()}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(directory);
    const removeFile = () => {
      try {
        // Only our own lock: never a file another process wrote after taking over.
        if (holderOf(path) === process.pid) unlinkSync(path);
      } catch {
        // A leftover file is stale and taken over by the next start.
      }
    };
    // Also on process.exit() without a shutdown (a failed start): the next start then finds no lock.
    process.on('exit', removeFile);
    return {
      path,
      release() {
        if (!held.delete(directory)) return;
        process.off('exit', removeFile);
        removeFile();
      },
    };
  }
  throw new DataDirectoryInUse(`the embedded database ${directory} could not be locked (${path} keeps changing)`);
}

/** Where the embedded database of a DataDirectory lives. */
export const embeddedDirectory = (dataDirectory: string) => resolve(dataDirectory, 'pglite');

/**
 * Before building anything: when another live process holds the embedded database of this
 * DataDirectory, write one line naming the directory and that process, and exit (EX_TEMPFAIL). The
 * lock itself is taken, atomically, when the database starts.
 */
export function refuseIfEmbeddedDatabaseInUse(settings: { connectionString: string | null; dataDirectory: string }, hint = ''): void {
  if (settings.connectionString) return;
  const directory = embeddedDirectory(settings.dataDirectory);
  const holder = dataDirectoryHolder(directory);
  if (holder === null) return;
  process.stderr.write(`Refusing to start: ${inUseMessage(directory, holder)}${hint}\n`);
  process.exit(75);
}
