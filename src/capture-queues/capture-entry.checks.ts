import { boundText } from '../common/text';

/**
 * The checks every capture entry passes when it is enqueued (contract 13), so what reaches the flush
 * can be written: text is stripped of control characters (NUL above all: it cannot be stored in text
 * or jsonb) and of unpaired surrogates (jsonb refuses them), and cut to its bound; numbers are finite
 * and within their column; GUIDs are well formed; dates are real. Each check returns the cleaned entry,
 * or null for an entry that cannot be written (the queue then drops and counts it). The checks of each
 * table's entries are in its description (telemetry/telemetry.tables.ts), built from these parts.
 */

/** Bounds of telemetry text written from pipeline data (names, keys, messages, URLs). */
export const CAPTURE_TEXT = { name: 256, key: 1024, message: 2048, url: 2048 } as const;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Durations are bigint microseconds: whole, not negative, and exact in a double. */
const MAX_MICROSECONDS = Number.MAX_SAFE_INTEGER;
/** Occurrence dates a pipeline can produce (PostgreSQL's own range is far wider; JavaScript's too). */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

/** Caller text made storable: unpaired surrogates replaced (U+FFFD), no control characters, at most `max` code points. */
export function captureText(value: unknown, max: number): string | null {
  if (value === null || value === undefined) return null;
  return boundText(String(value).replace(LONE_SURROGATE, '\uFFFD'), max);
}

/** A well-formed GUID in lower case, null for null/undefined, undefined when malformed. */
export function captureGuid(value: unknown): string | null | undefined {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' && GUID.test(value) ? value.toLowerCase() : undefined;
}

/** Rounded whole microseconds, or undefined when not a finite, non-negative number in range. */
export function microseconds(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_MICROSECONDS) return undefined;
  return Math.round(value);
}

export function captureDate(value: unknown): Date | undefined {
  if (!(value instanceof Date)) return undefined;
  const ms = value.getTime();
  return Number.isFinite(ms) && ms >= EARLIEST && ms <= LATEST ? value : undefined;
}

/** Whether `value` is one of the codes `names` names (a stage of a table's stage list). */
export const isCode = (names: Record<number, string>, value: unknown): boolean => typeof value === 'number' && value in names;

/** A model GUID of a stage counter (a uuid column), lower case; null when malformed. */
export function checkModelGuid(value: unknown): string | null {
  return captureGuid(value) ?? null;
}
