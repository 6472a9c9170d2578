/** Bytes a writer starts with; it grows when one row does not fit. */
const INITIAL = 96 * 1024;
/** Below this many bytes a plain loop copies faster than a native Buffer copy (measured on keys and short texts). */
const SHORT = 48;

/**
 * Builds a chunk of the answer directly as bytes: streamed rows are written into one buffer and handed
 * to the socket whole (`take`), so a 100000-row answer never exists as one string, and text that
 * needs no escaping goes from PostgreSQL's bytes to the socket without being decoded. Numbers, dates
 * and GUIDs are written digit by digit: no intermediate strings on the path of every row.
 */
export class ByteWriter {
  private buffer = Buffer.allocUnsafe(INITIAL);
  private position = 0;
  private readonly digits = new Uint8Array(24);

  get length(): number {
    return this.position;
  }

  /** Room for n more bytes; returns the buffer to write them into at `at` (then `advance`). */
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

  /** Text known to be ASCII. */
  ascii(text: string): void {
    const target = this.reserve(text.length);
    let at = this.position;
    for (let i = 0; i < text.length; i++) target[at++] = text.charCodeAt(i);
    this.position = at;
  }

  utf8(text: string): void {
    this.reserve(Buffer.byteLength(text));
    this.position += this.buffer.write(text, this.position, 'utf8');
  }

  bytes(source: Uint8Array, start: number, end: number): void {
    const length = end - start;
    const target = this.reserve(length);
    if (length < SHORT) {
      let at = this.position;
      for (let i = start; i < end; i++) target[at++] = source[i];
    } else {
      target.set(source.subarray(start, end), this.position);
    }
    this.position += length;
  }

  byte(value: number): void {
    this.reserve(1);
    this.buffer[this.position++] = value;
  }

  /** A whole number of at most 2^53 in magnitude, in decimal. */
  integer(value: number): void {
    const target = this.reserve(24);
    let at = this.position;
    if (value < 0) {
      target[at++] = 0x2d;
      value = -value;
    }
    let n = 0;
    do {
      const next = Math.floor(value / 10);
      this.digits[n++] = 0x30 + (value - next * 10);
      value = next;
    } while (value > 0);
    while (n > 0) target[at++] = this.digits[--n];
    this.position = at;
  }

  /** `value` in exactly `width` decimal digits (0 <= value < 10^width). */
  padded(value: number, width: number): void {
    const target = this.reserve(width);
    for (let i = this.position + width - 1; i >= this.position; i--) {
      const next = Math.floor(value / 10);
      target[i] = 0x30 + (value - next * 10);
      value = next;
    }
    this.position += width;
  }

  /** The bytes written so far, as a buffer of their own; the writer starts a fresh one. */
  take(): Buffer {
    const chunk = this.buffer.subarray(0, this.position);
    this.buffer = Buffer.allocUnsafe(INITIAL);
    this.position = 0;
    return chunk;
  }
}
