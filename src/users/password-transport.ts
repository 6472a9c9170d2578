import { Inject, Injectable } from '@nestjs/common';
import { constants, createPrivateKey, createPublicKey, KeyObject, privateDecrypt } from 'node:crypto';
import { AppSettings, SETTINGS } from '../config/config.module';

/**
 * RSA-OAEP (SHA-256) password transport (service.md 5.4, contract 3). When enabled, every password
 * field arrives as base64 ciphertext; a value that does not decrypt yields null, never an exception.
 */
@Injectable()
export class PasswordTransport {
  readonly enabled: boolean;
  readonly publicKeyPem: string | null;
  private readonly privateKey: KeyObject | null;

  constructor(@Inject(SETTINGS) settings: AppSettings) {
    this.enabled = settings.passwordAsymmetricEncryption;
    if (this.enabled) {
      // Settings refused to start without both keys; a key that does not parse fails start-up here.
      this.privateKey = createPrivateKey(settings.passwordAsymmetricEncryptionPrivateKey!);
      this.publicKeyPem = createPublicKey(settings.passwordAsymmetricEncryptionPublicKey!)
        .export({ type: 'spki', format: 'pem' })
        .toString();
    } else {
      this.privateKey = null;
      this.publicKeyPem = null;
    }
  }

  /** The clear value of a password field: itself when transport encryption is off. */
  open(value: string | undefined | null): string | null {
    if (value === undefined || value === null) return null;
    if (!this.enabled) return value;
    if (value.length > 2048 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return null;
    try {
      return privateDecrypt(
        { key: this.privateKey!, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
        Buffer.from(value, 'base64'),
      ).toString('utf8');
    } catch {
      return null;
    }
  }
}
