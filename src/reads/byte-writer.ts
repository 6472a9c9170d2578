/** Bytes a writer starts with; it grows when one row does not fit. */
const INITIAL = 96 * 1024;

/**
 * Builds a chunk of the answer directly as bytes: streamed rows are written into one buffer and handed
 * to the socket whole (`take`), so a 100000-row answer never exists as one string, and text that
 * needs no escaping goes from PostgreSQL's bytes to the socket without being decoded.
 */
export class ByteWriter {
  private buffer = Buffer.allocUnsafe(INITIAL);
  private position = 0;

  get length(): number {
    return this.position;
  }

  /** Room for n more bytes, then the raw buffer and position to write them at (see `advance`). */
  reserve(n: number): Buffer {
    if (this.position + n > this.buffer.length) {
      const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.position + n));
      this.buffer.copy(bigger, 0, 0, this.position);
      this.buffer = bigger;
    }
    return this.buffer;
  }

  get at(): number {
    return this.position;
  }

  advance(n: number): void {
    this.position += n;
  }

  /** Text known to be ASCII (digits, keys, ISO dates). */
  ascii(text: string): void {
    this.reserve(text.length);
    this.position += this.buffer.write(text, this.position, 'latin1');
  }

  utf8(text: string): void {
    this.reserve(Buffer.byteLength(text));
    this.position += this.buffer.write(text, this.position, 'utf8');
  }

  bytes(source: Buffer, start: number, end: number): void {
    this.reserve(end - start);
    source.copy(this.buffer, this.position, start, end);
    this.position += end - start;
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.position++] = value;
  }

  /** The bytes written so far, as a buffer of their own; the writer starts a fresh one. */
  take(): Buffer {
    const chunk = this.buffer.subarray(0, this.position);
    this.buffer = Buffer.allocUnsafe(INITIAL);
    this.position = 0;
    return chunk;
  }
}
