import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';

/** What the callback needs to finish a flow, carried inside the sealed `state` parameter. */
export interface OAuthFlow {
  /** PKCE code_verifier (secret: never leaves the service in clear). */
  codeVerifier: string;
  nonce: string;
  /** The redirect_uri sent to the provider, repeated in the token request. */
  redirectUri: string;
  /** A local path, already checked. */
  returnUrl: string;
  /** SHA-256 (base64url) of the browser-binding cookie value. */
  binding: string;
  /** Unix milliseconds after which the state is refused. */
  expires: number;
}

const VERSION = 1;
const AAD = Buffer.from('tm-oauth-state-v1');

/**
 * Seals and opens the OAuth `state` (contract 8). Why a sealed state instead of a session store: the
 * callback arrives as a cross-site form_post, which carries no SameSite=Lax cookie, and any node of the
 * cluster may receive it (no sticky sessions). So the state itself carries everything the callback
 * needs, as AES-256-GCM ciphertext under a key derived (HKDF-SHA256) from JwtKey, which every node
 * shares:
 *
 * - confidentiality keeps the PKCE verifier secret from whoever sees the URL (provider logs, referrers);
 * - the GCM tag makes it tamper-proof, so nonce, redirect URI and return URL cannot be chosen by an
 *   attacker; a random IV makes every state unique and unguessable (it is the CSRF `state` as well);
 * - an expiry (10 minutes) bounds replays, and the provider's single-use code bounds them further;
 * - a hash of a random browser-binding cookie ties the flow to the browser that started it wherever the
 *   cookie can travel (always for the GET/query callback; for form_post when the cookie is
 *   SameSite=None; Secure, i.e. over HTTPS). This defeats login CSRF (an attacker's own code and state
 *   replayed into a victim's browser).
 */
export class OAuthStateSealer {
  private readonly key: Buffer;

  constructor(jwtKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(jwtKey, 'utf8'), Buffer.from('oauth-state'), Buffer.from('tm oauth state key'), 32));
  }

  seal(flow: OAuthFlow): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(JSON.stringify({ v: VERSION, ...flow }), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The flow, or null when the state is absent, malformed, forged or from another key. */
  open(state: unknown): OAuthFlow | null {
    if (typeof state !== 'string' || state.length < 40 || state.length > 8192 || !/^[A-Za-z0-9_-]+$/.test(state)) return null;
    const raw = Buffer.from(state, 'base64url');
    if (raw.length < 12 + 16 + 1) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      const parsed = JSON.parse(text) as Partial<OAuthFlow> & { v?: number };
      if (parsed.v !== VERSION) return null;
      const { codeVerifier, nonce, redirectUri, returnUrl, binding, expires } = parsed;
      if ([codeVerifier, nonce, redirectUri, returnUrl, binding].some((value) => typeof value !== 'string') || typeof expires !== 'number') {
        return null;
      }
      return { codeVerifier: codeVerifier!, nonce: nonce!, redirectUri: redirectUri!, returnUrl: returnUrl!, binding: binding!, expires };
    } catch {
      return null;
    }
  }
}

/** A fresh browser-binding secret and the hash the state carries. */
export function newBinding(): { cookie: string; hash: string } {
  const cookie = randomBytes(32).toString('base64url');
  return { cookie, hash: bindingHash(cookie) };
}

export function bindingHash(cookie: string): string {
  return createHash('sha256').update(cookie, 'utf8').digest('base64url');
}

export function bindingMatches(cookie: string, expectedHash: string): boolean {
  const actual = Buffer.from(bindingHash(cookie));
  const expected = Buffer.from(expectedHash);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

// eslint-disable-next-line no-control-regex
