import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { messageOf } from './errors';

/**
 * Files and folders the service writes for its own user only (issue 25): generated secrets, the
 * spool, the process lock, signing keys, all under DataDirectory.
 *
 * - Created 0600 (folders 0700) whatever the umask: the mode is set on the open descriptor after
 *   creation, so a umask cannot widen it, and a file left wider by an older version is narrowed.
 * - Never through a link: every open carries O_NOFOLLOW, so a symbolic link planted where a file will
 *   be written fails (ELOOP) instead of writing, truncating or reading the link's target; new files
 *   are created with O_EXCL and renamed into place (rename replaces a link, never follows it).
 * - Only the service's own: a file or folder owned by another user is refused (a file someone else
 *   could prepare in advance is not ours to trust), as is anything that is not a regular file.
 *
 * Errors are thrown as PrivateFileError with one line naming the path and what to do.
 */
export class PrivateFileError extends Error {
  constructor(
    readonly path: string,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

const FILE_MODE = 0o600;
const DIRECTORY_MODE = 0o700;
const NOFOLLOW = constants.O_NOFOLLOW;

/** The user the service runs as (null where the platform has none). */
const ownUid = (): number | null => (typeof process.geteuid === 'function' ? process.geteuid() : null);

/** Turns the errors of an open through a link into a line that says so; others go through. */
function openFailed(path: string, error: unknown): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'EMLINK') {
    throw new PrivateFileError(path, `${path} is a symbolic link; the service never writes or reads its files through a link: remove it`, code);
  }
  throw error;
}

/**
 * Checks what an open descriptor is: a regular file of this user. Narrows it to 0600 when it is
 * wider (a file from before this rule). Throws otherwise (the caller closes the descriptor).
 */
function checkOpened(path: string, fd: number, stats: Stats): void {
  if (!stats.isFile()) throw new PrivateFileError(path, `${path} is not a regular file: remove it`);
  const uid = ownUid();
  if (uid !== null && stats.uid !== uid) {
    throw new PrivateFileError(path, `${path} belongs to user ${stats.uid}, not to the user this service runs as (${uid}): remove it or chown it to ${uid}`);
  }
  if ((stats.mode & 0o777) !== FILE_MODE) fchmodSync(fd, FILE_MODE);
}

/**
 * Makes `path` a folder of this user with mode 0700 (its parents are created 0700 too). An existing
 * folder is narrowed to 0700; a link, a file or another user's folder there is refused.
 */
export function ensurePrivateDirectory(path: string): void {
  try {
    mkdirSync(path, { recursive: true, mode: DIRECTORY_MODE });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && existsSync(dirname(path))) {
      // Node's recursive mkdir says ENOENT on a read-only file system: the plain one gives the reason (EROFS).
      try {
        mkdirSync(path, { mode: DIRECTORY_MODE });
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code !== 'EEXIST') throw again;
      }
    } else if (code !== 'EEXIST') throw error;
  }
  const stats = lstatSync(path);
  if (stats.isSymbolicLink()) {
    throw new PrivateFileError(path, `${path} is a symbolic link; the service never writes its files through a link: remove it`, 'ELOOP');
  }
  if (!stats.isDirectory()) throw new PrivateFileError(path, `${path} is not a directory: remove it`);
  const uid = ownUid();
  if (uid !== null && stats.uid !== uid) {
    throw new PrivateFileError(path, `${path} belongs to user ${stats.uid}, not to the user this service runs as (${uid}): chown it to ${uid}`);
  }
  // chmod on a path just checked not to be a link (a folder of ours: nobody else can swap it).
  if ((stats.mode & 0o777) !== DIRECTORY_MODE) chmodSync(path, DIRECTORY_MODE);
}

/**
 * Writes `data` to `path` as a whole: a new file (O_EXCL, O_NOFOLLOW, 0600) beside it, flushed, then
 * renamed over `path`. A crash leaves the old file or the new one, never half of one; a link at
 * `path` is replaced, its target never touched. The folder is created 0700 when missing.
 */
export function writePrivateFile(path: string, data: string | Uint8Array): void {
  ensurePrivateDirectory(dirname(path));
  const next = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = openSync(next, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, FILE_MODE);
  } catch (error) {
    openFailed(next, error);
  }
  try {
    fchmodSync(fd, FILE_MODE);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(next);
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(next, path);
  } catch (error) {
    unlinkSync(next);
    throw error;
  }
}

/**
 * Creates `path` only if nothing is there (O_CREAT|O_EXCL: an existing file or link, even a dangling
 * one, is EEXIST), 0600, and returns its descriptor open for writing. For the process lock.
 */
export function createPrivateFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, FILE_MODE);
  } catch (error) {
    openFailed(path, error);
  }
  try {
    fchmodSync(fd, FILE_MODE);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}

/**
 * The text of a file of the service, or null when there is none. A link there is refused (a link
 * to /etc/shadow planted as secrets.json must not be read as the service's secret), so is a file of
 * another user; a file wider than 0600 is narrowed.
 */
export function readPrivateFile(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    openFailed(path, error);
  }
  try {
    checkOpened(path, fd, fstatSync(fd));
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens a file of the service for appending (created 0600 when missing), never through a link,
 * refusing another user's file. For the spool.
 */
export async function openPrivateFileForAppend(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW, FILE_MODE);
  } catch (error) {
    openFailed(path, error);
  }
  try {
    checkOpened(path, handle.fd, await handle.stat());
  } catch (error) {
    await handle.close();
    throw error;
  }
  return handle;
}

/** Like readPrivateFile, asynchronously: the text, or null when there is no file. */
export async function readPrivateFileAsync(path: string): Promise<string | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    openFailed(path, error);
  }
  try {
    checkOpened(path, handle.fd, await handle.stat());
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Like writePrivateFile, asynchronously and flushed with fdatasync: for the spool's rewrite, on the
 * request path (a new file beside `path`, renamed over it).
 */
export async function writePrivateFileAsync(path: string, data: string): Promise<void> {
  const next = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle;
  try {
    handle = await open(next, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, FILE_MODE);
  } catch (error) {
    openFailed(next, error);
  }
  try {
    await handle.chmod(FILE_MODE);
    await handle.writeFile(data);
    await handle.datasync();
  } catch (error) {
    await handle.close();
    await unlink(next).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(next, path);
  } catch (error) {
    await unlink(next).catch(() => undefined);
    throw new Error(`cannot put ${path} in place: ${messageOf(error)}`);
  }
}
