// Type-only: the shapes the service declares, without loading the service (and Nest) into the verifier.
import type { ProofView, PublicKeyView } from '../audit-log.service';
import { CHECKPOINTS_PAGE, LEAVES_PAGE } from '../pages';
import { TransportError } from './errors';

/** What the routes of contract 15 answer, after the shape checks below (hashes still base64). */
export type ServedPublicKey = PublicKeyView;
export interface ServedCheckpoint {
  treeSize: number;
  rootHash: string;
  createdDate: string;
  note: string;
}
export interface ServedLeaf {
  leafIndex: number;
  table: string;
  rowId: string;
  rowCreatedDate: string;
  rowHash: string;
  leafHash: string;
  canonical: string | null;
}
export type ServedProof = ProofView;
export interface ServedRetentionRun {
  id: string;
  tableName: string;
  cutoff: string;
  runDate: string;
}

const REQUEST_TIMEOUT_MS = 120_000;

type Json = Record<string, unknown>;

function fail(path: string, what: string): never {
  throw new TransportError(`GET ${path}: the answer is not what contract 15 describes (${what})`);
}

function object(path: string, value: unknown): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(path, 'expected an object');
  return value as Json;
}

function array(path: string, value: unknown): unknown[] {
  if (!Array.isArray(value)) fail(path, 'expected an array');
  return value;
}

function text(path: string, o: Json, key: string): string {
  if (typeof o[key] !== 'string') fail(path, `${key} is not text`);
  return o[key] as string;
}

function nullableText(path: string, o: Json, key: string): string | null {
  if (o[key] === null) return null;
  return text(path, o, key);
}

/** A bigint column may come as a JSON number or a decimal string; either must be a safe whole number. */
function whole(path: string, o: Json, key: string): number {
  const v = o[key];
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^(0|[1-9]\d*)$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) fail(path, `${key} is not a whole number`);
  return n;
}

/** An id as decimal text whatever JSON type carried it. */
function decimal(path: string, o: Json, key: string): string {
  const v = o[key];
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string') return v;
  fail(path, `${key} is not an id`);
}

/**
 * The routes of contract 15 over HTTP with node's fetch, each answer checked for shape. Every failure
 * to get an answer is a TransportError (the command exits 2); content is judged by the verifier.
 */
export class AuditClient {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  private async get(path: string, allow404 = false): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        headers: { 'x-api-key': this.apiKey, accept: 'application/json' },
        // Never follow a redirect: it could carry the API key to another host.
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new TransportError(`GET ${path}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    if (allow404 && response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (response.status !== 200) {
      let detail = '';
      try {
        const body = (await response.json()) as { title?: unknown; detail?: unknown };
        detail = [body.title, body.detail].filter((s) => typeof s === 'string').join(': ');
      } catch {
        // not a problem document; the status says enough
      }
      throw new TransportError(`GET ${path}: HTTP ${response.status}${detail ? ` (${detail.slice(0, 200)})` : ''}`);
    }
    try {
      return await response.json();
    } catch {
      throw new TransportError(`GET ${path}: the answer is not JSON`);
    }
  }

  async publicKey(): Promise<ServedPublicKey> {
    const path = '/api/Audit/PublicKey';
    const o = object(path, await this.get(path));
    return { origin: text(path, o, 'origin'), keyId: text(path, o, 'keyId'), publicKey: text(path, o, 'publicKey'), verifierKey: text(path, o, 'verifierKey') };
  }

  private checkpoint(path: string, value: unknown): ServedCheckpoint {
    const o = object(path, value);
    return { treeSize: whole(path, o, 'treeSize'), rootHash: text(path, o, 'rootHash'), createdDate: String(o.createdDate), note: text(path, o, 'note') };
  }

  async latestCheckpoint(): Promise<ServedCheckpoint> {
    const path = '/api/Audit/Checkpoint';
    return this.checkpoint(path, await this.get(path));
  }

  /** Checkpoints with TreeSize ≥ from, oldest first, at most CHECKPOINTS_PAGE. */
  async checkpoints(from: number): Promise<ServedCheckpoint[]> {
    const path = `/api/Audit/Checkpoints?from=${from}`;
    const list = array(path, await this.get(path)).map((c) => this.checkpoint(path, c));
    if (list.length > CHECKPOINTS_PAGE) fail(path, `more than ${CHECKPOINTS_PAGE} checkpoints`);
    return list;
  }

  /** Leaves start ≤ index < end (end - start ≤ LEAVES_PAGE). */
  async leaves(start: number, end: number): Promise<ServedLeaf[]> {
    const path = `/api/Audit/Leaves?start=${start}&end=${end}`;
    return array(path, await this.get(path)).map((value) => {
      const o = object(path, value);
      return {
        leafIndex: whole(path, o, 'leafIndex'),
        table: text(path, o, 'table'),
        rowId: decimal(path, o, 'rowId'),
        rowCreatedDate: text(path, o, 'rowCreatedDate'),
        rowHash: text(path, o, 'rowHash'),
        leafHash: text(path, o, 'leafHash'),
        canonical: nullableText(path, o, 'canonical'),
      };
    });
  }

  /** The inclusion proof of a row against checkpoint treeSize, or null when the service says 404. */
  async proof(table: string, id: string, treeSize: number): Promise<ServedProof | null> {
    const path = `/api/Audit/Proof?table=${encodeURIComponent(table)}&id=${encodeURIComponent(id)}&treeSize=${treeSize}`;
    const value = await this.get(path, true);
    if (value === null) return null;
    const o = object(path, value);
    const auditPath = array(path, o.auditPath).map((h) => {
      if (typeof h !== 'string') fail(path, 'auditPath holds a non-text hash');
      return h;
    });
    return {
      leafIndex: whole(path, o, 'leafIndex'),
      treeSize: whole(path, o, 'treeSize'),
      leafHash: text(path, o, 'leafHash'),
      leafRecord: text(path, o, 'leafRecord'),
      canonical: nullableText(path, o, 'canonical'),
      auditPath,
    };
  }

  async consistency(first: number, second: number): Promise<string[]> {
    const path = `/api/Audit/Consistency?first=${first}&second=${second}`;
    const o = object(path, await this.get(path));
    return array(path, o.proof).map((h) => {
      if (typeof h !== 'string') fail(path, 'proof holds a non-text hash');
      return h;
    });
  }

  /** Rows outside the log (contract 18); null when the service predates the route (404). */
  async outside(): Promise<{ total: number; rows: { table: string; rowId: string; createdDate: string | null; reason: string }[] } | null> {
    const path = '/api/Audit/Outside';
    const answer = await this.get(path, true);
    if (answer === null) return null;
    const o = object(path, answer);
    return {
      total: whole(path, o, 'total'),
      rows: array(path, o.rows).map((value) => {
        const row = object(path, value);
        return { table: text(path, row, 'table'), rowId: decimal(path, row, 'rowId'), createdDate: row.createdDate === null ? null : String(row.createdDate), reason: text(path, row, 'reason') };
      }),
    };
  }

  async retentionRuns(): Promise<ServedRetentionRun[]> {
    const path = '/api/Audit/RetentionRuns';
    return array(path, await this.get(path)).map((value) => {
      const o = object(path, value);
      return { id: decimal(path, o, 'id'), tableName: String(o.tableName), cutoff: String(o.cutoff), runDate: String(o.runDate) };
    });
  }
}
