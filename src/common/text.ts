/**
 * Contract 12's control characters: C0 (tab included), DEL and C1. The one definition in the service;
 * validators that need it inside a larger pattern use CONTROL_CHARACTER_RANGE.
 */
export const CONTROL_CHARACTER_RANGE = '\\u0000-\\u001f\\u007f-\\u009f';
const CONTROL = new RegExp(`[${CONTROL_CHARACTER_RANGE}]`, 'gu');
const ANY_CONTROL = new RegExp(`[${CONTROL_CHARACTER_RANGE}]`, 'u');

/** True when `value` holds a control character (contract 12): such input is refused, not stripped. */
export function hasControlCharacter(value: string): boolean {
  return ANY_CONTROL.test(value);
}

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

/**
 * `row` with each text `bounds` names (by property) stripped and bounded by boundText; the other
 * members as they are, an absent one still absent.
 */
export function boundTexts<R extends object>(row: R, bounds: { readonly [key: string]: number | undefined }): R {
  const bounded: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const [key, max] of Object.entries(bounds)) if (key in row && max !== undefined) bounded[key] = boundText(bounded[key], max);
  return bounded as R;
}

/** Column bounds of the audit tables (contract 9). */
export const BOUNDS = {
  name: 256,
  ip: 64,
  userAgent: 512,
  failureMessage: 2048,
  message: 512,
} as const;
