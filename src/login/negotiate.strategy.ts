import { Injectable, Logger } from '@nestjs/common';

/** The part of the `kerberos` module this strategy uses (typed here: the module is optional). */
interface KerberosServer {
  username: string;
  targetName: string;
  contextComplete: boolean;
  response: string;
  step(token: string): Promise<string>;
}
interface KerberosModule {
  initializeServer(service: string): Promise<KerberosServer>;
}

export type NegotiateOutcome =
  | { kind: 'accepted'; principal: string; responseToken: string | null }
  | { kind: 'challenge' }
  | { kind: 'refused' };

/** A token is base64 of a GSS/SPNEGO blob; anything else, or absurdly large, is not worth a library call. */
const TOKEN = /^Negotiate\s+([A-Za-z0-9+/]+={0,2})\s*$/i;
const MAX_TOKEN_CHARS = 16 * 1024;

/**
 * The small SPNEGO acceptor behind GET /api/Authentication/ByNegotiate (service.md 5.2), written here
 * because passport-kerberos is unmaintained. One request, one leg: a Kerberos AP-REQ wrapped in
 * SPNEGO completes in a single step, so no per-connection state is kept (which also keeps nodes free
 * of sticky sessions).
 *
 * The service credentials come from the standard Kerberos environment (KRB5_KTNAME keytab,
 * KRB5_CONFIG), read by GSSAPI itself. The acceptor takes any key of the keytab, then insists the
 * ticket was issued for an HTTP/<host> service principal.
 *
 * `kerberos` is an optional native dependency, loaded lazily, so the service still starts (and every
 * Negotiate attempt answers 401) where it failed to build.
 */
@Injectable()
export class NegotiateStrategy {
  private readonly logger = new Logger('Negotiate');
  private module: KerberosModule | null | undefined;

  private load(): KerberosModule | null {
    if (this.module === undefined) {
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        this.module = require('kerberos') as KerberosModule;
      } catch (error) {
        this.module = null;
        this.logger.error(`the kerberos module cannot be loaded, Negotiate sign-in is unavailable: ${messageOf(error)}`);
      }
    }
    return this.module;
  }

  /** True when the native module loads; checked at start so an operator learns it early. */
  available(): boolean {
    return this.load() !== null;
  }

  /** Runs the acceptor on the request's Authorization header. Never throws. */
  async accept(authorization: string | undefined): Promise<NegotiateOutcome> {
    if (authorization === undefined || authorization.length > MAX_TOKEN_CHARS) return { kind: 'challenge' };
    const match = TOKEN.exec(authorization);
    if (!match) return { kind: 'challenge' };
    const kerberos = this.load();
    if (!kerberos) return { kind: 'refused' };
    try {
      const server = await kerberos.initializeServer('');
      const response = await server.step(match[1]);
      if (!server.contextComplete || !server.username) return { kind: 'refused' };
      if (!/^HTTP\//i.test(server.targetName ?? '')) {
        this.logger.warn('a Negotiate ticket for a service other than HTTP was refused');
        return { kind: 'refused' };
      }
      return { kind: 'accepted', principal: server.username, responseToken: response || server.response || null };
    } catch (error) {
      // The GSSAPI reason only (expired ticket, wrong key, replay); never the token.
      this.logger.warn(`Negotiate handshake refused: ${messageOf(error)}`);
      return { kind: 'refused' };
    }
  }
}

function messageOf(error: unknown): string {
  return String((error as { message?: unknown } | null)?.message ?? error);
}

/** `alice@EXAMPLE.COM` → `alice`: the realm (after the last unescaped @) is stripped. */
export function userNameOfPrincipal(principal: string): string {
  for (let i = principal.length - 1; i >= 0; i--) {
    if (principal[i] === '@' && principal[i - 1] !== '\\') return principal.slice(0, i).replace(/\\@/g, '@');
  }
  return principal;
}
