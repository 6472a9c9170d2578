import { Inject, Injectable, Logger } from '@nestjs/common';
import { DeadlineError, withinDeadline } from '../common/deadline';
import { AppSettings, SETTINGS } from '../config/config.module';
import { messageOf } from '../common/errors';

/** The part of the `kerberos` module this acceptor uses (typed here: the module is optional). */
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
  | { kind: 'refused' }
  /** The acceptor did not answer in time, or every acceptor slot is taken: the ticket could not be checked. */
  | { kind: 'unavailable' };

/**
 * At most this many acceptor calls at once. Each one occupies a thread of libuv's pool, which argon2,
 * file and DNS work share (4 threads unless UV_THREADPOOL_SIZE says otherwise): Negotiate alone must
 * never take them all.
 */
export const NEGOTIATE_CONCURRENCY = 2;

/** Where the loaded package is kept: a global symbol, on the native binding every module registry shares. */
const SHARED_KERBEROS = Symbol.for('transaction-monitoring.kerberos');

/**
 * Loads the `kerberos` package once per process. Its JavaScript wraps the native classes by replacing
 * `KerberosServer.prototype.step` (and the client's) with promisified versions. The native binding is
 * cached per process, but a host that gives each unit its own module registry (Jest runs every test
 * file in one) evaluates that JavaScript again, and the second wrapper promisifies the first: every
 * step then returns a promise that never settles. So the first evaluation is kept on the binding and
 * reused by every later registry.
 */
export function loadKerberos<T = KerberosModule>(): T {
  // The package's own binding loader (Release or Debug build); it only requires the .node file.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadBindings } = require('kerberos/lib/util') as { loadBindings(): Record<symbol, unknown> };
  const binding = loadBindings();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  binding[SHARED_KERBEROS] ??= require('kerberos');
  return binding[SHARED_KERBEROS] as T;
}

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
export class NegotiateAcceptor {
  private readonly logger = new Logger('Negotiate');
  private module: KerberosModule | null | undefined;
  /** Acceptor calls not yet settled; a call that never settles keeps its slot (its thread is gone too). */
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(@Inject(SETTINGS) private readonly settings: AppSettings) {}

  private load(): KerberosModule | null {
    if (this.module === undefined) {
      try {
        this.module = loadKerberos<KerberosModule>();
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

  /**
   * Runs the acceptor on the request's Authorization header, within NegotiateTimeoutMilliseconds
   * (waiting for a slot included). Never throws.
   */
  async accept(authorization: string | undefined): Promise<NegotiateOutcome> {
    if (authorization === undefined || authorization.length > MAX_TOKEN_CHARS) return { kind: 'challenge' };
    const match = TOKEN.exec(authorization);
    if (!match) return { kind: 'challenge' };
    const kerberos = this.load();
    if (!kerberos) return { kind: 'refused' };
    const deadline = Date.now() + this.settings.negotiateTimeoutMs;
    if (!(await this.acquire(deadline))) {
      this.logger.warn(`Negotiate handshake not checked: all ${NEGOTIATE_CONCURRENCY} acceptor slots stayed busy for ${this.settings.negotiateTimeoutMs} ms`);
      return { kind: 'unavailable' };
    }
    const call = this.step(kerberos, match[1]);
    // The slot is freed when the native call settles, not at the deadline: its thread is busy until then.
    void call.then(() => this.release(), () => this.release());
    try {
      return await withinDeadline(call, Math.max(0, deadline - Date.now()));
    } catch (error) {
      if (error instanceof DeadlineError) {
        this.logger.error(`the Kerberos acceptor did not answer within ${this.settings.negotiateTimeoutMs} ms; the handshake is refused with 503`);
        return { kind: 'unavailable' };
      }
      // The GSSAPI reason only (expired ticket, wrong key, replay); never the token.
      this.logger.warn(`Negotiate handshake refused: ${messageOf(error)}`);
      return { kind: 'refused' };
    }
  }

  /** One acceptor leg; rejects with the GSSAPI reason. */
  private async step(kerberos: KerberosModule, token: string): Promise<NegotiateOutcome> {
    const server = await kerberos.initializeServer('');
    const response = await server.step(token);
    if (!server.contextComplete || !server.username) return { kind: 'refused' };
    if (!/^HTTP\//i.test(server.targetName ?? '')) {
      this.logger.warn('a Negotiate ticket for a service other than HTTP was refused');
      return { kind: 'refused' };
    }
    return { kind: 'accepted', principal: server.username, responseToken: response || server.response || null };
  }

  /** Takes an acceptor slot, waiting for one until `deadline` (real time); false when none came. */
  private acquire(deadline: number): Promise<boolean> {
    if (this.running < NEGOTIATE_CONCURRENCY) {
      this.running++;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        this.running++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        const index = this.waiting.indexOf(grant);
        if (index >= 0) this.waiting.splice(index, 1);
        resolve(false);
      }, Math.max(0, deadline - Date.now()));
      this.waiting.push(grant);
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }
}

/** `alice@EXAMPLE.COM` → `alice`: the realm (after the last unescaped @) is stripped. */
export function userNameOfPrincipal(principal: string): string {
  for (let i = principal.length - 1; i >= 0; i--) {
    if (principal[i] === '@' && principal[i - 1] !== '\\') return principal.slice(0, i).replace(/\\@/g, '@');
  }
  return principal;
}
