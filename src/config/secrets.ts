import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, writeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ed25519KeyProblem, Settings } from './settings';

/** Where a generated AuditSigningKey is kept, inside DataDirectory. */
export const AUDIT_SIGNING_KEY_FILE = 'audit-signing-key.pem';

type ResolvedSecrets = { jwtKey: string; apiHmacKey: string; auditSigningKey: string };

type SecretName = 'jwtKey' | 'apiHmacKey';
const SECRET_NAMES: SecretName[] = ['jwtKey', 'apiHmacKey'];

/**
 * Outside production a missing JwtKey or ApiHmacKey is generated at first start and kept in
 * DataDirectory/secrets.json (mode 0600) so restarts keep sessions and API keys valid.
 * In production loadSettings has already refused to start without them.
 */
export function resolveSecrets(settings: Settings): Settings & ResolvedSecrets {
  const auditSigningKey = settings.auditSigningKey ?? keptAuditSigningKey(settings.dataDirectory);
  return { ...resolveSharedSecrets(settings), auditSigningKey };
}

function resolveSharedSecrets(settings: Settings): Settings & { jwtKey: string; apiHmacKey: string } {
  const missing = SECRET_NAMES.filter((name) => settings[name] === null);
  if (missing.length === 0) return settings as Settings & { jwtKey: string; apiHmacKey: string };

  mkdirSync(settings.dataDirectory, { recursive: true });
  const file = join(settings.dataDirectory, 'secrets.json');
  let stored: Partial<Record<SecretName, string>> = {};
  try {
    stored = JSON.parse(readFileSync(file, 'utf8')) as Partial<Record<SecretName, string>>;
  } catch {
    stored = {};
  }
  let changed = false;
  for (const name of missing) {
    if (typeof stored[name] !== 'string' || stored[name]!.length < 32) {
      stored[name] = randomBytes(48).toString('base64url');
      changed = true;
    }
  }
  if (changed) writeFileSync(file, JSON.stringify(stored, null, 2), { mode: 0o600 });
  return {
    ...settings,
    jwtKey: settings.jwtKey ?? stored.jwtKey!,
    apiHmacKey: settings.apiHmacKey ?? stored.apiHmacKey!,
  };
}

/**
 * Outside production a missing AuditSigningKey is generated at first start and kept in
 * DataDirectory/audit-signing-key.pem, so the checkpoints of every restart verify with one key.
 * Created with O_EXCL (two processes starting at once: one writes, the other reads what it wrote) and
 * O_NOFOLLOW (a link planted in the directory is never followed), mode 0600. A file that holds no
 * Ed25519 key refuses the start: replacing it would silently change the log's key.
 */
function keptAuditSigningKey(dataDirectory: string): string {
  mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
  const file = join(dataDirectory, AUDIT_SIGNING_KEY_FILE);
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  let fd: number;
  try {
    fd = openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readKeptKey(file);
  }
  try {
    writeSync(fd, pem);
  } finally {
    closeSync(fd);
  }
  return pem;
}

function readKeptKey(file: string, attempt = 0): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  let pem: string;
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${file} is not a regular file`);
    pem = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  // Another process may have created it a moment ago and not yet written it.
  if (pem === '' && attempt < 50) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    return readKeptKey(file, attempt + 1);
  }
  const problem = ed25519KeyProblem(pem);
  if (problem) throw new Error(`${file}: ${problem}; restore the key the log was signed with, or set AuditSigningKey`);
  return pem;
}
