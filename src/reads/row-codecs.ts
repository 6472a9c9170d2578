import { ByteWriter } from './byte-writer';

/**
 * How one output column of a grid read travels from PostgreSQL's binary COPY format to the answer.
 * Rows are streamed as `COPY … TO STDOUT (FORMAT binary)`: PostgreSQL sends each value in its
 * binary form (no text conversion, no JSON building on the database side) and these codecs write
 * it straight into the JSON answer or the CSV cell. The same decoded value feeds both, so an export
 * and the JSON rows can never disagree.
 */
export interface ColumnCodec {
  /** The SQL type an export's keyset value is cast back to. */
  readonly sqlType: string;
  /** Text (and JSON) cells get the spreadsheet formula guard; numbers, booleans, GUIDs and dates cannot start with one. */
  readonly textual: boolean;
  /** Whether this is a timestamp, written as ISO-8601 UTC with milliseconds. */
  readonly date: boolean;
  /** Appends the value as a JSON value. */
  json(out: ByteWriter, b: Buffer, start: number, length: number): void;
  /** The value as a CSV cell before quoting: the same value the JSON member holds. */
  cell(b: Buffer, start: number, length: number): string;
  /** Text that PostgreSQL reads back as exactly this value (the keyset of an export batch). */
  key(b: Buffer, start: number, length: number): string;
}

const TWO_POW_32 = 4_294_967_296;
/** Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01T00:00:00Z). */
const PG_EPOCH_MS = 946_684_800_000;
const INT64_MAX = 9_223_372_036_854_775_807n;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = Buffer.from('0123456789abcdef');

/** A signed 64-bit integer: a number when it is exact as one, otherwise a bigint. */
function int64(b: Buffer, at: number): number | bigint {
  const high = b.readInt32BE(at);
  // |high| < 2^21 keeps the value within ±2^53, where a double is exact.
  if (high >= -0x20_0000 && high < 0x20_0000) return high * TWO_POW_32 + b.readUInt32BE(at + 4);
  return b.readBigInt64BE(at);
}

/** Text as a JSON string: PostgreSQL's UTF-8 bytes copied as they are unless a character must be escaped. */
function jsonString(out: ByteWriter, b: Buffer, start: number, end: number): void {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c < 0x20 || c === QUOTE || c === BACKSLASH) {
      out.utf8(JSON.stringify(b.toString('utf8', start, end)));
      return;
    }
  }
  out.byte(QUOTE);
  out.bytes(b, start, end);
  out.byte(QUOTE);
}

const numberText = (value: number) => (Object.is(value, -0) ? '-0' : String(value));

function integer(sqlType: string, read: (b: Buffer, at: number) => number | bigint): ColumnCodec {
  return {
    sqlType,
    textual: false,
    date: false,
    json: (out, b, start) => {
      const value = read(b, start);
      if (typeof value === 'number') out.integer(value);
      else out.ascii(value.toString());
    },
    cell: (b, start) => String(read(b, start)),
    key: (b, start) => String(read(b, start)),
  };
}

const float8: ColumnCodec = {
  sqlType: 'float8',
  textual: false,
  date: false,
  // NaN and the infinities are no JSON numbers; PostgreSQL's own JSON writes them as strings too.
  json: (out, b, start) => {
    const value = b.readDoubleBE(start);
    out.ascii(Number.isFinite(value) ? numberText(value) : `"${value}"`);
  },
  cell: (b, start) => numberText(b.readDoubleBE(start)),
  key: (b, start) => numberText(b.readDoubleBE(start)),
};

const bool: ColumnCodec = {
  sqlType: 'bool',
  textual: false,
  date: false,
  json: (out, b, start) => out.ascii(b[start] !== 0 ? 'true' : 'false'),
  cell: (b, start) => (b[start] !== 0 ? 'true' : 'false'),
  key: (b, start) => (b[start] !== 0 ? 'true' : 'false'),
};

function text(sqlType: string): ColumnCodec {
  return {
    sqlType,
    textual: true,
    date: false,
    json: (out, b, start, length) => jsonString(out, b, start, start + length),
    cell: (b, start, length) => b.toString('utf8', start, start + length),
    key: (b, start, length) => b.toString('utf8', start, start + length),
  };
}

function writeUuid(target: Buffer, at: number, b: Buffer, start: number): number {
  for (let i = 0; i < 16; i++) {
    const byte = b[start + i];
    target[at++] = HEX[byte >> 4];
    target[at++] = HEX[byte & 15];
    if (i === 3 || i === 5 || i === 7 || i === 9) target[at++] = 0x2d;
  }
  return at;
}

const uuid: ColumnCodec = {
  sqlType: 'uuid',
  textual: false,
  date: false,
  json: (out, b, start) => {
    const target = out.reserve(38);
    let at = out.at;
    target[at++] = QUOTE;
    at = writeUuid(target, at, b, start);
    target[at++] = QUOTE;
    out.advance(38);
  },
  cell: (b, start) => {
    const target = Buffer.allocUnsafe(36);
    writeUuid(target, 0, b, start);
    return target.toString('latin1', 0, 36);
  },
  key: (b, start) => uuid.cell(b, start, 16),
};

/** json and jsonb carry JSON text already (jsonb after a version byte). */
function jsonDocument(sqlType: string, skip: number): ColumnCodec {
  const raw = (b: Buffer, start: number, length: number) => b.toString('utf8', start + skip, start + length);
  return {
    sqlType,
    textual: true,
    date: false,
    json: (out, b, start, length) => out.bytes(b, start + skip, start + length),
    // Compact, as JSON.stringify of the member's value writes it.
    cell: (b, start, length) => JSON.stringify(JSON.parse(raw(b, start, length))),
    key: raw,
  };
}

/**
 * A timestamptz is microseconds since 2000-01-01 UTC. Written like Date.toISOString (milliseconds,
 * the microseconds cut off as to_char's MS does); the key keeps the microseconds. Rows of one read
 * mostly share their second, so the text up to the second is remembered.
 */
class Timestamps {
  /**
   * "YYYY-MM-DDTHH:MM:SS." of recent seconds, as text and as bytes, in 16 slots by second. A row
   * usually has two dates (when it happened, when it was written) some seconds apart, so one
   * remembered second would be replaced at every value.
   */
  private readonly seconds = new Float64Array(16).fill(Number.NaN);
  private readonly prefixes: string[] = new Array<string>(16).fill('');
  private readonly prefixBytes: Uint8Array[] = new Array<Uint8Array>(16).fill(new Uint8Array(0));
  private slot = 0;

  /** Milliseconds since the Unix epoch and the microseconds beyond them, or the name of an infinity. */
  private split(b: Buffer, start: number): { ms: number; micro: number } | string {
    const us = int64(b, start);
    if (typeof us === 'bigint') {
      if (us === INT64_MAX) return 'infinity';
      if (us === -INT64_MAX - 1n) return '-infinity';
      throw new RangeError('timestamp beyond the range of a JavaScript date');
    }
    const micro = ((us % 1000) + 1000) % 1000;
    return { ms: (us - micro) / 1000 + PG_EPOCH_MS, micro };
  }

  /** The milliseconds within the second of `ms`; `slot` then names that second's prefix. */
  private within(ms: number): number {
    const milli = ((ms % 1000) + 1000) % 1000;
    const second = (ms - milli) / 1000;
    const slot = second & 15;
    if (this.seconds[slot] !== second) {
      // toISOString ends in ".sssZ"; keep everything before the milliseconds.
      const prefix = new Date(second * 1000).toISOString().slice(0, -4);
      this.prefixes[slot] = prefix;
      this.prefixBytes[slot] = Buffer.from(prefix, 'latin1');
      this.seconds[slot] = second;
    }
    this.slot = slot;
    return milli;
  }

  json(out: ByteWriter, b: Buffer, start: number): void {
    const us = int64(b, start);
    if (typeof us === 'bigint') {
      out.ascii(`"${this.split(b, start) as string}"`);
      return;
    }
    const micro = ((us % 1000) + 1000) % 1000;
    const milli = this.within((us - micro) / 1000 + PG_EPOCH_MS);
    out.byte(QUOTE);
    const prefix = this.prefixBytes[this.slot];
    out.bytes(prefix, 0, prefix.length);
    out.padded(milli, 3);
    out.byte(0x5a); // Z
    out.byte(QUOTE);
  }

  iso(b: Buffer, start: number): string {
    const parts = this.split(b, start);
    if (typeof parts === 'string') return parts;
    const milli = this.within(parts.ms);
    return `${this.prefixes[this.slot]}${String(milli).padStart(3, '0')}Z`;
  }

  exact(b: Buffer, start: number): string {
    const parts = this.split(b, start);
    if (typeof parts === 'string') return parts;
    const milli = this.within(parts.ms);
    return `${this.prefixes[this.slot]}${String(milli).padStart(3, '0')}${String(parts.micro).padStart(3, '0')}Z`;
  }
}

const timestamps = new Timestamps();
const timestamptz: ColumnCodec = {
  sqlType: 'timestamptz',
  textual: false,
  date: true,
  json: (out, b, start) => timestamps.json(out, b, start),
  cell: (b, start) => timestamps.iso(b, start),
  key: (b, start) => timestamps.exact(b, start),
};

/** Codecs by PostgreSQL type OID: every type a grid read's columns have. Anything else is refused. */
const BY_OID = new Map<number, ColumnCodec>([
  [16, bool],
  [20, integer('int8', int64)],
  [21, integer('int2', (b, at) => b.readInt16BE(at))],
  [23, integer('int4', (b, at) => b.readInt32BE(at))],
  [25, text('text')],
  [114, jsonDocument('json', 0)],
  [701, float8],
  [1042, text('bpchar')],
  [1043, text('varchar')],
  [1184, timestamptz],
  [2950, uuid],
  [3802, jsonDocument('jsonb', 1)],
]);

export function codecForType(oid: number): ColumnCodec | undefined {
  return BY_OID.get(oid);
}
