/**
 * The `Changes` text of an AdminChange row (contract 18), pure: a JSON object of the fields that
 * changed, `"field": [before, after]`, fields named as in the API (camelCase), keys sorted by code
 * point, no spaces; a creation has null before, a deletion null after; a role's permissions a sorted
 * array of ids. A secret (a password, wire hash or key value) is never written: its value shows as
 * "(secret)" (null stays null), and an API key is named only by its display identifier. At most 8192
 * characters: a longer text keeps its first keys whole and ends with `"…":"truncated"`. A registry
 * member change renders the same text in SQL from the row it locked (database/recorded-change.ts);
 * test/admin-changes-rendered.e2e-spec.ts holds the two equal.
 */
import { byCodePoint, CHANGES_MAX } from '../common/changes-format';

export { byCodePoint, CHANGES_MAX };

/** A field's value as Changes writes it. Dates are written as ISO-8601 text. */
export type ChangeValue = string | number | boolean | null | readonly number[] | Date;

/** The fields of one side (before or after) of a change; null: the thing did not exist. */
export type ChangeSide = Readonly<Record<string, ChangeValue | undefined>> | null;

/** The value written in place of a secret. */
export const SECRET = '(secret)';
const TRUNCATED = `${JSON.stringify('…')}:${JSON.stringify('truncated')}`;

function render(value: ChangeValue | undefined, secret: boolean): string {
  if (value === undefined || value === null) return 'null';
  if (secret) return JSON.stringify(SECRET);
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return JSON.stringify([...(value as number[])].sort((a, b) => a - b));
  if (typeof value === 'number' && !Number.isFinite(value)) return 'null';
  return JSON.stringify(value);
}

const same = (a: string, b: string) => a === b;

/**
 * The Changes text between `before` and `after`: every field present on either side whose rendered
 * value differs (a creation: before null; a deletion: after null). `secrets` names the fields whose
 * values are never written; such a field counts as changed whenever `alwaysChanged` names it (a new
 * password hash may equal the old one's rendering, "(secret)", but it did change).
 */
export function changesText(before: ChangeSide, after: ChangeSide, options: { secrets?: readonly string[]; alwaysChanged?: readonly string[] } = {}): string {
  const secrets = new Set(options.secrets ?? []);
  const always = new Set(options.alwaysChanged ?? []);
  const keys = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort(byCodePoint);
  const pieces: string[] = [];
  for (const key of keys) {
    const b = before === null ? null : before[key];
    const a = after === null ? null : after[key];
    if (b === undefined && a === undefined) continue;
    const secret = secrets.has(key);
    const left = before === null ? 'null' : render(b, secret);
    const right = after === null ? 'null' : render(a, secret);
    if (same(left, right) && !always.has(key)) continue;
    pieces.push(`${JSON.stringify(key)}:[${left},${right}]`);
  }
  return capped(pieces);
}

/**
 * The Changes text of pairs computed elsewhere (a sink's headers are an object of names to "(secret)",
 * which changesText does not render): `"field":[before,after]` as JSON, keys sorted by code point, capped
 * like every Changes text. The caller has already replaced every secret.
 */
export function pairsText(changes: Readonly<Record<string, readonly [unknown, unknown]>>): string {
  return capped(Object.keys(changes).sort(byCodePoint).map((key) => `${JSON.stringify(key)}:${JSON.stringify(changes[key])}`));
}

/** `{"rows":[[table,id],…]}` of a RowsAdopted row, capped like every Changes text. */
export function adoptedRowsText(rows: readonly (readonly [string, string])[]): string {
  const list = rows.map(([table, id]) => `[${JSON.stringify(table)},${JSON.stringify(id)}]`);
  const whole = `{"rows":[${list.join(',')}]}`;
  if (Array.from(whole).length <= CHANGES_MAX) return whole;
  // Too many rows for one text: as many whole pairs as fit, then the truncation mark.
  const room = CHANGES_MAX - `{"rows":[],${TRUNCATED}}`.length;
  let used = 0;
  const kept: string[] = [];
  for (const pair of list) {
    const cost = Array.from(pair).length + (kept.length > 0 ? 1 : 0);
    if (used + cost > room) break;
    kept.push(pair);
    used += cost;
  }
  return `{"rows":[${kept.join(',')}],${TRUNCATED}}`;
}

/** The object text of `pieces` (each `"key":value`), cut after the last whole piece that fits with the truncation mark. */
function capped(pieces: readonly string[]): string {
  const whole = `{${pieces.join(',')}}`;
  if (Array.from(whole).length <= CHANGES_MAX) return whole;
  const room = CHANGES_MAX - Array.from(`{${TRUNCATED}}`).length;
  const kept: string[] = [];
  let used = 0;
  for (const piece of pieces) {
    const cost = Array.from(piece).length + 1;
    if (used + cost > room) break;
    kept.push(piece);
    used += cost;
  }
  return `{${[...kept, TRUNCATED].join(',')}}`;
}
