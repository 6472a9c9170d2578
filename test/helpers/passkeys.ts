import { createHash, generateKeyPairSync, KeyObject, randomBytes, sign } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { CDPSession, Page } from 'playwright-core';
import { startTestApp, StartOptions, TestApp } from './app';
import { freePort } from './free-port';
import { TestDatabase } from './database';

/**
 * A node whose pages are served from http://localhost:<port> (WebAuthn takes a host name, never an
 * address, as relying party: PasskeyRelyingPartyId localhost). `origins` lists every node's origin,
 * so a ceremony begun at one node is accepted at another.
 */
export interface PasskeyNode extends TestApp {
  origin: string;
}

/** Free ports for `count` nodes, and the PasskeyOrigins setting naming all of them. */
export async function passkeyPorts(count: number): Promise<{ ports: number[]; origins: string }> {
  const ports: number[] = [];
  for (let i = 0; i < count; i++) ports.push(await freePort());
  return { ports, origins: ports.map((port) => `http://localhost:${port}`).join(',') };
}

export async function startPasskeyNode(
  options: StartOptions & { port?: number; origins?: string; db?: TestDatabase } = {},
): Promise<PasskeyNode> {
  const port = options.port ?? (await freePort());
  const t = await startTestApp({
    ...options,
    port,
    env: { PasskeyRelyingPartyId: 'localhost', PasskeyOrigins: options.origins ?? `http://localhost:${port}`, ...options.env },
  });
  return Object.assign(t, { origin: `http://localhost:${port}` });
}

/** One credential as the DevTools WebAuthn domain describes it. */
export interface VirtualCredential {
  credentialId: string;
  isResidentCredential: boolean;
  rpId?: string;
  privateKey: string;
  userHandle?: string;
  signCount: number;
  backupEligibility?: boolean;
  backupState?: boolean;
}

/**
 * A DevTools WebAuthn virtual authenticator in the page's browser (CDP `WebAuthn.*`): a platform
 * authenticator (ctap2, internal) holding discoverable credentials, with user verification, that
 * answers without a person (automatic presence). Its credentials can be read and rewritten (counter,
 * key, backup flags) to stage what a cloned or synced authenticator would send.
 */
export class VirtualAuthenticator {
  private constructor(
    readonly cdp: CDPSession,
    readonly id: string,
  ) {}

  static async add(
    page: Page,
    options: { isUserVerified?: boolean; hasUserVerification?: boolean; backupEligible?: boolean; backupState?: boolean } = {},
  ): Promise<VirtualAuthenticator> {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: options.hasUserVerification ?? true,
        isUserVerified: options.isUserVerified ?? true,
        automaticPresenceSimulation: true,
        defaultBackupEligibility: options.backupEligible ?? false,
        defaultBackupState: options.backupState ?? false,
      },
    });
    return new VirtualAuthenticator(cdp, authenticatorId);
  }

  async credentials(): Promise<VirtualCredential[]> {
    const { credentials } = await this.cdp.send('WebAuthn.getCredentials', { authenticatorId: this.id });
    return credentials as VirtualCredential[];
  }

  /** Replaces a stored credential (same id) with `changes` applied: a counter set back, another private key. */
  async rewrite(credentialId: string, changes: Partial<VirtualCredential>): Promise<void> {
    const current = (await this.credentials()).find((c) => c.credentialId === credentialId);
    if (!current) throw new Error(`no credential ${credentialId}`);
    await this.cdp.send('WebAuthn.removeCredential', { authenticatorId: this.id, credentialId });
    await this.cdp.send('WebAuthn.addCredential', { authenticatorId: this.id, credential: { ...current, ...changes } });
  }

  /** Copies a credential into another authenticator (a second device holding the same passkey). */
  async copyTo(other: VirtualAuthenticator, credential: VirtualCredential): Promise<void> {
    await other.cdp.send('WebAuthn.addCredential', { authenticatorId: other.id, credential });
  }

  async setUserVerified(isUserVerified: boolean): Promise<void> {
    await this.cdp.send('WebAuthn.setUserVerified', { authenticatorId: this.id, isUserVerified });
  }

  async remove(): Promise<void> {
    await this.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: this.id });
  }
}

/**
 * What an authenticator answers to creation options without a browser: a fresh P-256 key, a
 * credential id of 32 random bytes, "none" attestation, user present and verified, the backup flags
 * as asked. Encoded with the WebAuthn library's own CBOR (no hand-written CBOR), so a registration
 * through the API alone is a genuine one the service verifies like any other.
 */
export function noneAttestation(
  options: { challenge: string; rp: { id?: string } },
  origin: string,
  flags: { backupEligible?: boolean; backedUp?: boolean } = {},
): { credentialId: Buffer; publicKey: Buffer; response: Record<string, unknown> } {
  const credentialId = randomBytes(32);
  const publicKey = cosePublicKey(generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey);
  // UP | UV | AT, plus BE and BS when asked.
  const flagByte = 0x01 | 0x04 | 0x40 | (flags.backupEligible ? 0x08 : 0) | (flags.backedUp ? 0x10 : 0);
  const length = Buffer.alloc(2);
  length.writeUInt16BE(credentialId.length);
  const authData = Buffer.concat([
    createHash('sha256').update(options.rp.id ?? 'localhost').digest(),
    Buffer.from([flagByte]),
    Buffer.alloc(4),
    Buffer.alloc(16),
    length,
    credentialId,
    publicKey,
  ]);
  const attestationObject = isoCBOR.encode(new Map<string, string | Map<string, string> | Uint8Array>([
    ['fmt', 'none'],
    ['attStmt', new Map<string, string>()],
    ['authData', new Uint8Array(authData)],
  ]));
  const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false }));
  return {
    credentialId,
    publicKey,
    response: {
      id: credentialId.toString('base64url'),
      rawId: credentialId.toString('base64url'),
      type: 'public-key',
      clientExtensionResults: {},
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        attestationObject: Buffer.from(attestationObject).toString('base64url'),
        transports: ['internal'],
      },
    },
  };
}

/** The COSE form (EC2, P-256, ES256) of a public key, as UserPasskey stores it; the library's CBOR. */
export function cosePublicKey(publicKey: KeyObject): Buffer {
  const jwk = publicKey.export({ format: 'jwk' });
  const cose = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, new Uint8Array(Buffer.from(jwk.x!, 'base64url'))],
    [-3, new Uint8Array(Buffer.from(jwk.y!, 'base64url'))],
  ]);
  return Buffer.from(isoCBOR.encode(cose));
}

/**
 * A discoverable P-256 credential held in the test, as an authenticator holds it, for API tests that
 * need genuine assertions without a browser (what bench/passkey-sign-in.js signs with): its COSE public
 * key (the library's CBOR) to store, and assertions over a challenge with the flags and counter asked.
 */
export function softwarePasskey(origin: string, rpId = 'localhost'): {
  credentialId: Buffer;
  publicKey: Buffer;
  assert(challenge: string, options?: { userVerified?: boolean; counter?: number }): Record<string, unknown>;
} {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const credentialId = randomBytes(32);
  const sha256 = (data: Buffer | string): Buffer => createHash('sha256').update(data).digest();
  return {
    credentialId,
    publicKey: cosePublicKey(publicKey),
    assert(challenge, { userVerified = true, counter = 0 } = {}) {
      const count = Buffer.alloc(4);
      count.writeUInt32BE(counter);
      // UP, and UV when the user was verified.
      const authData = Buffer.concat([sha256(rpId), Buffer.from([0x01 | (userVerified ? 0x04 : 0)]), count]);
      const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge, origin, crossOrigin: false }));
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), privateKey);
      const id = credentialId.toString('base64url');
      return {
        id,
        rawId: id,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: clientDataJSON.toString('base64url'), authenticatorData: authData.toString('base64url'), signature: signature.toString('base64url') },
      };
    },
  };
}
