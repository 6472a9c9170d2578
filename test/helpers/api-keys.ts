import { createHmac } from 'node:crypto';
import { TEST_API_HMAC_KEY, TestApp } from './app';
import { Browser } from './http';

/**
 * An independent reading of the key format of contract 5 (not the service's code), so the tests
 * check the format itself: base62 (0-9A-Za-z) of the UTF-8 bytes of `secret:1:escapedUserName:checksum`.
 */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function decodeBase62(text: string): Buffer {
  let n = 0n;
  for (const c of text) {
    const v = ALPHABET.indexOf(c);
    if (v < 0) throw new Error(`not base62: ${c}`);
    n = n * 62n + BigInt(v);
  }
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

export function encodeBase62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

export function checksumOf(body: string, hmacKey = TEST_API_HMAC_KEY): string {
  return createHmac('sha256', Buffer.from(hmacKey, 'utf8')).update(body, 'utf8').digest('hex').slice(0, 8);
}

/** Splits a key into its four fields. */
export function keyFields(key: string): { secret: string; version: string; userName: string; checksum: string; body: string } {
  const text = decodeBase62(key).toString('utf8');
  const parts = text.split(':');
  if (parts.length !== 4) throw new Error(`expected four fields, got ${parts.length}`);
  const [secret, version, escaped, checksum] = parts;
  return { secret, version, userName: escaped.replace(/%3A/g, ':').replace(/%25/g, '%'), checksum, body: parts.slice(0, 3).join(':') };
}

/** Re-encodes `body:checksum`, for tampering. */
export function encodeKey(body: string, checksum: string): string {
  return encodeBase62(Buffer.from(`${body}:${checksum}`, 'utf8'));
}

/** Replaces the character at `index` with another of the same class. */
export function flipChar(text: string, index: number): string {
  const c = text[index];
  const replacement = /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : c === 'a' ? 'b' : c === 'A' ? 'B' : /[a-z]/.test(c) ? 'a' : 'A';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

export async function createKey(
  t: TestApp,
  admin: Browser,
  userId: number,
  body: Record<string, unknown> = { name: 'integration' },
): Promise<{ id: number; apiKey: string; apiKeyDisplay: string }> {
  const res = await admin.post(`/api/UserRegistry/${userId}/ApiKey`, body);
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${res.text}`);
  return res.json;
}

/** A request carrying only the given headers (no cookies, no Sec-Fetch-Site). */
export async function requestWithoutCookies(url: string, method: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json, setCookies: res.headers.getSetCookie() };
}

export const sessionWithApiKey = (t: TestApp, apiKey: string, extra: Record<string, string> = {}) =>
  requestWithoutCookies(`${t.url}/api/Authentication/Session`, 'GET', { 'x-api-key': apiKey, ...extra });
