import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { readPrivateFile, writePrivateFile } from '../common/private-file';
import { Settings } from './settings';

type SecretName = 'jwtKey' | 'apiHmacKey';
const SECRET_NAMES: SecretName[] = ['jwtKey', 'apiHmacKey'];

/**
 * Outside production a missing JwtKey or ApiHmacKey is generated at first start and kept in
 * DataDirectory/secrets.json (mode 0600, never through a link: src/common/private-file.ts) so
 * restarts keep sessions and API keys valid. In production loadSettings has already refused to start
 * without them.
 */
export function resolveSecrets(settings: Settings): Settings & { jwtKey: string; apiHmacKey: string } {
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
