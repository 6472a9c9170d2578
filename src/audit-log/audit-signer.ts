import { Inject, Injectable } from '@nestjs/common';
import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { AppSettings, SETTINGS } from '../config/config.module';
import { DATABASE_IDENTITY } from '../database/database-identity';
import { keyId, rawPublicKey, signCheckpoint, verifierKey } from './note';

/**
 * The default origin: `transaction-monitoring/audit/<database system identifier>` (contract 15). The
 * identity is `<system identifier>/<database>` (database-identity.ts), or an address when the
 * identifier could not be read; whatever a note's key name may not hold ('+', spaces) becomes '_'.
 */
export function defaultOrigin(databaseIdentity: string): string {
  const system = /^(\d+)\//.exec(databaseIdentity)?.[1] ?? databaseIdentity;
  return `transaction-monitoring/audit/${system}`.replace(/[^\x21-\x2a\x2c-\x7e]/g, '_');
}

/** The log's signing key and origin (AuditSigningKey, AuditLogOrigin): signs checkpoints, names the verifier key. */
@Injectable()
export class AuditSigner {
  readonly origin: string;
  private readonly privateKey: KeyObject;
  readonly publicKey: Buffer;

  constructor(@Inject(SETTINGS) settings: AppSettings, @Inject(DATABASE_IDENTITY) databaseIdentity: string) {
    this.origin = settings.auditLogOrigin ?? defaultOrigin(databaseIdentity);
    this.privateKey = createPrivateKey({ key: settings.auditSigningKey, format: 'pem' });
    this.publicKey = rawPublicKey(createPublicKey(this.privateKey));
  }

  get keyId(): Buffer {
    return keyId(this.origin, this.publicKey);
  }

  get verifierKey(): string {
    return verifierKey(this.origin, this.publicKey);
  }

  sign(treeSize: number, rootHash: Buffer): string {
    return signCheckpoint(this.origin, treeSize, rootHash, this.privateKey);
  }
}
