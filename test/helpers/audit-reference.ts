import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The vectors Go's sumdb/tlog and sumdb/note computed (test/fixtures/audit-reference/README.md). */
export interface AuditReferenceVectors {
  Leaves: Array<{
    Table: string;
    RowID: string;
    RowCreatedDate: string;
    Row: Record<string, string | null>;
    Canonical: string;
    RowHash: string;
    LeafRecord: string;
    LeafHash: string;
  }>;
  Roots: string[];
  Inclusion: Array<{ Index: number; TreeSize: number; Proof: string[] }>;
  Consistency: Array<{ First: number; Second: number; Proof: string[] }>;
  Key: { origin: string; seedHex: string; privateKeyPem: string; publicKey: string; keyId: string; verifierKey: string };
  Checkpoints: Array<{ TreeSize: number; RootHash: string; Note: string }>;
}

export function auditReferenceVectors(): AuditReferenceVectors {
  return JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'audit-reference', 'vectors.json'), 'utf8')) as AuditReferenceVectors;
}

export const fromBase64 = (text: string): Buffer => Buffer.from(text, 'base64');
