import type { Response } from 'express';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import { constants, createBrotliCompress, createGzip } from 'node:zlib';
import type { Clock } from '../common/clock';

/** How long a client may take no data before its answer is ended (contract 13). */
export const CLIENT_IDLE_MS = 30_000;
/** How often a waiting answer looks at whether its client took data (real time; idleness is judged on the Clock). */
const IDLE_CHECK_MS = 1000;

export type ContentCoding = 'br' | 'gzip';

/**
 * The content coding for an answer, from Accept-Encoding: br when the client takes it, else gzip,
 * else none; q=0 refuses a coding. Measured on a 26 MB default answer (bench/RESULTS.md): br at
 * quality 1 makes it 2.9 MB for ≈ 65 ms of CPU, gzip at level 1 3.1 MB for ≈ 80 ms (both on the
 * thread pool, beside the main thread), so br first. Higher levels cost 3-8 times the CPU for 5-10 %
 * fewer bytes, which does not pay for an answer produced at memory speed.
 */
export function negotiateEncoding(header: string | undefined): ContentCoding | null {
  if (!header) return null;
  const accepted = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...parameters] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = parameters.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    accepted.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weight = (coding: string) => accepted.get(coding) ?? accepted.get('*') ?? 0;
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return null;
}

/** The client went away, or took no data for CLIENT_IDLE_MS. */
export class ClientGone extends Error {}

/**
 * One streamed answer: headers, then chunks written with the client's pace respected. Nothing is
 * sent until `start`; after that an error can no longer become a problem answer, so `abort` cuts the
 * connection and the client sees an incomplete body (never a shorter answer that looks whole).
 */
export class AnswerStream {
  private sink: Writable;
  private readonly socket: Socket | null;
  private closed = false;
  private begun = false;

  constructor(
    private readonly res: Response,
    private readonly coding: ContentCoding | null,
    private readonly clock: Clock,
    private readonly idleMs = CLIENT_IDLE_MS,
  ) {
    this.socket = res.socket;
    this.sink = res;
    res.once('close', () => (this.closed = true));
  }

  get gone(): boolean {
    return this.closed;
  }

  /** Whether `start` was called: from then on a failure can only cut the answer off. */
  get started(): boolean {
    return this.begun;
  }

  /** Status and headers; the body follows with `write`. */
  start(contentType: string, headers: Record<string, string> = {}): void {
    this.begun = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', contentType);
    this.res.setHeader('Cache-Control', 'no-store');
    this.res.setHeader('X-Content-Type-Options', 'nosniff');
    this.res.setHeader('Vary', 'Accept-Encoding');
    for (const [name, value] of Object.entries(headers)) this.res.setHeader(name, value);
    if (this.coding) {
      this.res.setHeader('Content-Encoding', this.coding);
      // Fast settings: the answer is produced at memory speed and the coder must keep up with it.
      const compressor =
        this.coding === 'gzip' ? createGzip({ level: 1 }) : createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
      compressor.once('error', () => this.abort());
      compressor.pipe(this.res);
      this.sink = compressor;
    }
  }

  /** Writes a chunk; false when the client is behind and the caller should `waitForRoom`. */
  write(chunk: Buffer): boolean {
    if (this.closed) return false;
    return this.sink.write(chunk);
  }

  /**
   * Resolves once the client has taken enough to write more. Rejects with ClientGone if it goes
   * away or takes no data for the idle limit.
   */
  waitForRoom(): Promise<void> {
    if (this.closed) return Promise.reject(new ClientGone('the client went away'));
    if (!this.sink.writableNeedDrain) return Promise.resolve();
    return this.until(this.sink, 'drain');
  }

  /** Ends the answer and waits until all of it has been handed to the socket (same idle limit). */
  async finish(): Promise<void> {
    if (this.closed) throw new ClientGone('the client went away');
    const finished = this.until(this.res, 'finish');
    this.sink.end();
    await finished;
  }

  /**
   * Waits for `event` while watching the client: progress is the socket handing queued bytes to the
   * kernel, which happens only as the client reads. No progress for the idle limit, or the
   * connection closing, rejects with ClientGone.
   */
  private until(target: Writable, event: 'drain' | 'finish'): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let queued = this.socket?.writableLength ?? 0;
      let lastProgress = this.clock.nowMs();
      const progress = () => (lastProgress = this.clock.nowMs());
      const cleanup = () => {
        clearInterval(timer);
        target.off(event, onEvent);
        this.res.off('close', onClose);
        this.socket?.off('drain', progress);
      };
      const onEvent = () => {
        cleanup();
        resolve();
      };
      const onClose = () => {
        cleanup();
        if (event === 'finish' && this.res.writableFinished) resolve();
        else reject(new ClientGone('the client went away'));
      };
      const timer = setInterval(() => {
        const now = this.socket?.writableLength ?? 0;
        if (now < queued) progress();
        queued = now;
        if (this.clock.nowMs() - lastProgress >= this.idleMs) {
          cleanup();
          reject(new ClientGone(`the client took no data for ${this.idleMs / 1000} s`));
        }
      }, IDLE_CHECK_MS);
      target.on(event, onEvent);
      this.res.on('close', onClose);
      this.socket?.on('drain', progress);
    });
  }

  /** Cuts the connection: whatever was sent stays an incomplete answer. */
  abort(): void {
    if (this.sink !== this.res) this.sink.destroy();
    this.res.destroy();
    this.closed = true;
  }
}
