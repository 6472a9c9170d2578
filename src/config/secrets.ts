import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { closeSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createPrivateFile, ensurePrivateDirectory, readPrivateFile, writePrivateFile } from '../common/private-file';
import { ed25519KeyProblem, Settings } from './settings';

/** Where a generated AuditSigningKey is kept, inside DataDirectory. */
export const AUDIT_SIGNING_KEY_FILE = 'audit-signing-key.pem';

type ResolvedSecrets = { jwtKey: string; apiHmacKey: string; auditSigningKey: string };

type SecretName = 'jwtKey' | 'apiHmacKey';
const SECRET_NAMES: SecretName[] = ['jwtKey', 'apiHmacKey'];

/**
 * Outside production a missing JwtKey or ApiHmacKey is generated at first start and kept in
 * DataDirectory/secrets.json (mode 0600, never through a link: src/common/private-file.ts) so
 * restarts keep sessions and API keys valid. In production loadSettings has already refused to start
 * without them.
 */
export function resolveSecrets(settings: Settings): Settings & ResolvedSecrets {
  const auditSigningKey = settings.auditSigningKey ?? keptAuditSigningKey(settings.dataDirectory);
  return { ...resolveSharedSecrets(settings), auditSigningKey };
}

function resolveSharedSecrets(settings: Settings): Settings & { jwtKey: string; apiHmacKey: string } {
  const missing = SECRET_NAMES.filter((name) => settings[name] === null);
  if (missing.length === 0) return settings as Settings & { jwtKey: string; apiHmacKey: string };

  const file = join(settings.dataDirectory, 'secrets.json');
  let stored: Partial<Record<SecretName, string>> = {};
  // A link planted as secrets.json, or another user's file, throws: never read as our secret.
  const text = readPrivateFile(file);
  try {
    stored = text === null ? {} : (JSON.parse(text) as Partial<Record<SecretName, string>>);
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
  if (changed) writePrivateFile(file, JSON.stringify(stored, null, 2));
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
 * never through a link (src/common/private-file.ts), mode 0600. A file that holds no Ed25519 key
 * refuses the start: replacing it would silently change the log's key.
 */
function keptAuditSigningKey(dataDirectory: string): string {
  ensurePrivateDirectory(dataDirectory);
  const file = join(dataDirectory, AUDIT_SIGNING_KEY_FILE);
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  let fd: number;
  try {
    fd = createPrivateFile(file);
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
  // A link or another user's file there throws (readPrivateFile): never read as the log's key.
  const pem = readPrivateFile(file) ?? '';
  // Another process may have created it a moment ago and not yet written it.
  if (pem === '' && attempt < 50) {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    return readKeptKey(file, attempt + 1);
  }
  const problem = ed25519KeyProblem(pem);
  if (problem) throw new Error(`${file}: ${problem}; restore the key the log was signed with, or set AuditSigningKey`);
  return pem;
}
