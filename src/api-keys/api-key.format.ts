import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The base62 alphabet of contract 5, in this order. */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE62_VALUE = new Map([...BASE62].map((c, i) => [c, i]));
const BASE62_PATTERN = /^[0-9A-Za-z]+$/;

/** The only key version this service issues and accepts. */
export const API_KEY_VERSION = '1';
/** Length of the display identifier (service.md 2.1). */
export const API_KEY_DISPLAY_LENGTH = 8;
/**
 * Longest header value worth decoding. A key for a 256-character name whose every character needs
 * 4 UTF-8 bytes stays well below this; anything longer is refused before any big-number work.
 */
export const API_KEY_MAX_LENGTH = 2048;

// 62^8 < 2^53: eight digits at a time fit a double exactly, which keeps BigInt steps few.
const CHUNK = 8;
const CHUNK_BASE = 62n ** BigInt(CHUNK);

/**
 * Base62 of bytes read as one big-endian number. Leading zero bytes become leading '0' characters
 * (as in base58), so the encoding is reversible for any byte string.
 */
export function base62Encode(bytes: Buffer): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  let n = bytes.length > zeros ? BigInt(`0x${bytes.subarray(zeros).toString('hex')}`) : 0n;
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return '0'.repeat(zeros) + out;
}

/** Inverse of base62Encode; null when the text is not base62. */
export function base62Decode(text: string): Buffer | null {
  if (text === '' || !BASE62_PATTERN.test(text)) return null;
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '0') zeros++;
  const digits = text.slice(zeros);
  let n = 0n;
  for (let i = 0; i < digits.length; i += CHUNK) {
    const chunk = digits.slice(i, i + CHUNK);
    let value = 0;
    for (const c of chunk) value = value * 62 + BASE62_VALUE.get(c)!;
    n = n * (chunk.length === CHUNK ? CHUNK_BASE : 62n ** BigInt(chunk.length)) + BigInt(value);
  }
  let hex = n === 0n ? '' : n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(hex, 'hex')]);
}

/** `%` → `%25` and `:` → `%3A`, so the user name cannot add a field to the body. */
export function escapeUserName(name: string): string {
  return name.replace(/%/g, '%25').replace(/:/g, '%3A');
}

export function unescapeUserName(escaped: string): string {
  return escaped.replace(/%(25|3A)/gi, (match) => (match === '%25' ? '%' : ':'));
}

/** First 8 lowercase hex characters of HMAC-SHA256(body, ApiHmacKey as UTF-8 bytes). */
export function apiKeyChecksum(body: string, hmacKey: string): string {
  return createHmac('sha256', Buffer.from(hmacKey, 'utf8')).update(body, 'utf8').digest('hex').slice(0, 8);
}

/** The stored form of a key: lowercase hex SHA-256 of the key text. */
export function apiKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function apiKeyDisplay(key: string): string {
  return key.slice(0, API_KEY_DISPLAY_LENGTH);
}

export interface NewApiKey {
  /** The clear value: given to the caller once, never stored, never logged. */
  key: string;
  hash: string;
  display: string;
}

/** A fresh key for `userName` (contract 5): 32 random bytes, the version, the name, the checksum. */
export function generateApiKey(userName: string, hmacKey: string): NewApiKey {
  const secret = base62Encode(randomBytes(32));
  const body = `${secret}:${API_KEY_VERSION}:${escapeUserName(userName)}`;
  const key = base62Encode(Buffer.from(`${body}:${apiKeyChecksum(body, hmacKey)}`, 'utf8'));
  return { key, hash: apiKeyHash(key), display: apiKeyDisplay(key) };
}

/**
 * Decodes a presented key and checks its version and checksum (constant-time compare). Answers the
 * user name it claims, or null for any failure; the caller gives every failure the same outward reason.
 */
export function verifyApiKey(key: string, hmacKey: string): { userName: string } | null {
  if (key.length === 0 || key.length > API_KEY_MAX_LENGTH) return null;
  const bytes = base62Decode(key);
  if (!bytes) return null;
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return null; // not valid UTF-8
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  const body = text.slice(0, lastColon);
  const checksum = text.slice(lastColon + 1);
  const fields = body.split(':');
  if (fields.length !== 3) return null;
  const [secret, version, escapedName] = fields;
  if (!BASE62_PATTERN.test(secret) || version !== API_KEY_VERSION || escapedName === '') return null;
  if (!/^[0-9a-f]{8}$/.test(checksum)) return null;
  const expected = Buffer.from(apiKeyChecksum(body, hmacKey), 'utf8');
  if (!timingSafeEqual(expected, Buffer.from(checksum, 'utf8'))) return null;
  return { userName: unescapeUserName(escapedName) };
}
