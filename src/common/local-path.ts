import { hasControlCharacter } from './text';

// The one open-redirect guard of the service: every redirect target passes through it.

/**
 * The open-redirect guard (contract 8): a local path starts with a single '/', has no scheme, no
 * '//' or '\' at its start, no backslash or control character anywhere, and stays so after
 * percent-decoding (so `/%2F%2Fevil` and `/%5Cevil` are refused too). Anything else yields null.
 */
export function localPath(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 2048) return null;
  let current = value;
  for (let round = 0; round < 4; round++) {
    if (!isPlainLocal(current)) return null;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (decoded === current) break;
    current = decoded;
  }
  if (!isPlainLocal(current)) return null;
  // Last word to the URL parser: resolved against a dummy origin it must stay on that origin.
  try {
    const base = 'http://local.invalid';
    if (new URL(value, base).origin !== base) return null;
  } catch {
    return null;
  }
  return value;
}

function isPlainLocal(value: string): boolean {
  return value.startsWith('/') && !value.startsWith('//') && !value.includes('\\') && !hasControlCharacter(value);
}

/** True when `value` is a path on this site that a redirect may go to (see localPath). */
export function isLocalPath(value: unknown): value is string {
  return localPath(value) !== null;
}
