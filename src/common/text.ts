// C0 (tab included), DEL and C1 control characters (contract 12).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * Makes caller-supplied text safe to store: control characters removed first, then cut to the
 * column's bound (contract 12). Null and undefined stay null.
 */
export function boundText(value: unknown, max: number): string | null {
  if (value === null || value === undefined) return null;
  const text = String(value).replace(CONTROL, '');
  // Cut on code points so a surrogate pair is never split.
  const points = Array.from(text);
  return points.length > max ? points.slice(0, max).join('') : text;
}

/** Column bounds of the audit tables (contract 9). */
export const BOUNDS = {
  name: 256,
  ip: 64,
  userAgent: 512,
  failureMessage: 2048,
  message: 512,
} as const;
