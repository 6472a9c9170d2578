import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * The secrets of a sink (contract 19: the webhook's signing key, the syslog TLS client key, and the
 * webhook's extra headers, whose values are credentials such as `Splunk <token>`) must be usable by
 * the service, so they cannot be hashed like a password: they are kept encrypted with AES-256-GCM
 * under a key derived (HKDF-SHA-256) from the `ApiHmacKey` setting, the secret the service already
 * keeps for API keys (src/config/secrets.ts; generated and kept in DataDirectory outside production,
 * required in production). A database dump alone therefore reveals no sink secret. Each value has its
 * own random 96-bit nonce; the column it belongs to is the additional data, so a `Headers` envelope
 * pasted into `Secret` does not decrypt. Pure: no I/O.
 */
export class SinkSecretBox {
  private readonly key: Buffer;

  constructor(apiHmacKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', Buffer.from(apiHmacKey, 'utf8'), Buffer.from('transaction-monitoring'), Buffer.from('SecuritySink secrets v1'), 32));
  }

  /** `v1.<base64url nonce>.<base64url ciphertext || tag>`. */
  seal(column: 'Secret' | 'Headers', clear: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(Buffer.from(column));
    const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  /** The clear value; throws when the envelope was not made by this key for this column. */
  open(column: 'Secret' | 'Headers', envelope: string): string {
    const [version, nonce, body] = envelope.split('.');
    if (version !== 'v1' || !nonce || !body) throw new Error(`SecuritySink.${column}: not an envelope this service wrote`);
    const bytes = Buffer.from(body, 'base64url');
    if (bytes.length < 16) throw new Error(`SecuritySink.${column}: envelope too short`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(Buffer.from(column));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(`SecuritySink.${column}: cannot be decrypted (was ApiHmacKey changed?)`);
    }
  }
}
