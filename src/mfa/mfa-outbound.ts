import { X509Certificate } from 'node:crypto';
import * as http from 'node:http';
import { isIP } from 'node:net';
import * as tls from 'node:tls';

/** How the TLS peer of the passcode endpoint is trusted (service.md 5.3 item 5). */
export interface MfaTlsTrust {
  /** OutboundHttpMfaCertificateBypass: no certificate validation at all. */
  bypass: boolean;
  /** OutboundHttpMfaCertificateThumbprint: SHA-1 of the one trusted certificate, 40 hex digits. */
  thumbprint: string | null;
}

export interface OutboundReply {
  status: number;
  body: string;
}

/** A reply bigger than this is unreadable for our purpose; the provider answers a few bytes of JSON. */
const MAX_REPLY_BYTES = 64 * 1024;

/**
 * OpenSSL verification codes that only say "the chain does not lead to a trusted root". With a pinned
 * thumbprint these are tolerated; anything else (expiry, bad signature, revoked, and the host name,
 * checked separately) still fails.
 */
const CHAIN_TRUST_ERRORS = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_UNTRUSTED',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

export function normaliseThumbprint(value: string): string {
  return value.replace(/[:\s]/g, '').toUpperCase();
}

/**
 * Decides whether a TLS peer is acceptable under the pinning rule: the peer certificate's SHA-1
 * thumbprint must equal the pin, the host name must match it, and the only validation error allowed is
 * a chain-trust one. Returns the reason when refused, null when accepted.
 */
export function pinnedPeerProblem(socket: tls.TLSSocket, host: string, thumbprint: string): string | null {
  const raw = socket.getPeerCertificate(false)?.raw;
  if (!raw || raw.length === 0) return 'no peer certificate';
  const certificate = new X509Certificate(raw);
  if (normaliseThumbprint(certificate.fingerprint) !== normaliseThumbprint(thumbprint)) return 'thumbprint mismatch';
  const identity = tls.checkServerIdentity(host, socket.getPeerCertificate(false));
  if (identity) return `host name mismatch: ${identity.message}`;
  if (!socket.authorized) {
    // Node reports the OpenSSL verification code as a string (typed as Error).
    const reason = String(socket.authorizationError ?? 'unknown');
    if (!CHAIN_TRUST_ERRORS.has(reason)) return `certificate error ${reason}`;
  }
  return null;
}

/**
 * Opens the TLS connection first and checks the peer before a single byte of the request is written
 * (contract 12: no request body is sent before the pin is checked), then hands the verified socket to
 * the HTTP client.
 */
function connectTls(url: URL, trust: MfaTlsTrust, signal: AbortSignal): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const custom = trust.bypass || trust.thumbprint !== null;
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      servername: isIP(host) ? undefined : host,
      // Default: full validation by Node (chain and host name). Pinning and bypass decide below.
      rejectUnauthorized: !custom,
      ALPNProtocols: ['http/1.1'],
    });
    const abort = () => socket.destroy(new Error('timed out'));
    signal.addEventListener('abort', abort, { once: true });
    socket.once('error', (error) => {
      signal.removeEventListener('abort', abort);
      reject(error);
    });
    socket.once('secureConnect', () => {
      signal.removeEventListener('abort', abort);
      if (!trust.bypass && trust.thumbprint !== null) {
        const problem = pinnedPeerProblem(socket, host, trust.thumbprint);
        if (problem) {
          socket.destroy();
          reject(new Error(`pinned certificate refused: ${problem}`));
          return;
        }
      }
      resolve(socket);
    });
  });
}

/**
 * POSTs a JSON body to the passcode endpoint with the endpoint's own TLS trust rule. Rejects on any
 * transport problem or when the signal aborts; the caller turns that into a rejected factor.
 */
export async function postJson(
  url: URL,
  headers: Record<string, string>,
  body: string,
  trust: MfaTlsTrust,
  signal: AbortSignal,
): Promise<OutboundReply> {
  const socket = url.protocol === 'https:' ? await connectTls(url, trust, signal) : null;
  return new Promise<OutboundReply>((resolve, reject) => {
    const options: http.RequestOptions = {
      method: 'POST',
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      headers: {
        ...headers,
        'content-type': 'application/json',
        accept: 'application/json',
        'content-length': Buffer.byteLength(body).toString(),
      },
      signal,
    };
    // With our own verified socket there must be no agent (an agent would dial its own connection).
    if (socket) options.createConnection = () => socket;
    else options.agent = false;
    const request = http.request(options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_REPLY_BYTES) {
          request.destroy(new Error('reply too large'));
          return;
        }
        chunks.push(chunk);
      });
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.once('error', reject);
    });
    request.once('error', (error) => {
      socket?.destroy();
      reject(error);
    });
    request.end(body);
  });
}
