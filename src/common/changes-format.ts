/**
 * What every Changes text of an AdminChange row (contract 18) shares, whoever renders it: the service
 * (admin-changes/changes.ts) or a registry change's statement, which renders it in SQL from the row it
 * locked (database/recorded-change.ts). Here, below both, so the two renderings cannot drift apart.
 */

/** The longest Changes text, in characters (code points). */
export const CHANGES_MAX = 8192;

/** Code-point order (JavaScript's default sort compares UTF-16 units, which differs past U+FFFF). */
export function byCodePoint(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}
