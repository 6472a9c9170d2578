import { pairsText, SECRET } from '../admin-changes/changes';

/** What a sink is, as an AdminChange compares it: API names, secrets in clear (only to compare; never written out). */
export interface SinkSnapshot {
  name: string;
  type: string;
  url: string;
  format: string;
  secret: string | null;
  headers: Record<string, string> | null;
  active: boolean;
  nextLeafIndex: number;
}

/** `Changes` of contract 18: field → [before, after], keys sorted by code point. */
export type Changes = Record<string, [unknown, unknown]>;

/**
 * The `Changes` of an AdminChange for a sink (contract 18 and 19: SinkCreated, SinkChanged,
 * SinkDeleted, SinkReplayed): only the fields that changed, named as in the API, `null` before a
 * creation and after a deletion. The secret shows as "(secret)" and so does every header value
 * (contract 19: header values count as secrets); header names show, so an auditor sees that an
 * `Authorization` header was added or its value replaced, never the value. Pure: the routes call it
 * inside the change's transaction and hand the result to the AdminChange recorder.
 */
export const SinkChanges = {
  describe(before: SinkSnapshot | null, after: SinkSnapshot | null): Changes {
    const changes: Changes = {};
    const fields: Array<keyof SinkSnapshot> = ['name', 'type', 'url', 'format', 'secret', 'headers', 'active', 'nextLeafIndex'];
    for (const field of fields) {
      const was = before ? before[field] : null;
      const is = after ? after[field] : null;
      if (field === 'secret') {
        if (was !== is) changes.secret = [was === null ? null : SECRET, is === null ? null : SECRET];
      } else if (field === 'headers') {
        if (!sameHeaders(was as SinkSnapshot['headers'], is as SinkSnapshot['headers'])) changes.headers = [masked(was as SinkSnapshot['headers']), masked(is as SinkSnapshot['headers'])];
      } else if (was !== is) changes[field] = [was, is];
    }
    return Object.fromEntries(Object.entries(changes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  },

  /** The text stored in AdminChange.Changes: JSON with no spaces, keys by code point, capped at 8192 (contract 18). */
  text(changes: Changes): string {
    return pairsText(changes);
  },
};

function masked(headers: Record<string, string> | null): Record<string, string> | null {
  if (!headers) return null;
  return Object.fromEntries(
    Object.keys(headers)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
      .map((name) => [name, SECRET]),
  );
}

function sameHeaders(a: Record<string, string> | null, b: Record<string, string> | null): boolean {
  const left = Object.entries(a ?? {}).sort(([x], [y]) => (x < y ? -1 : 1));
  const right = Object.entries(b ?? {}).sort(([x], [y]) => (x < y ? -1 : 1));
  if ((a === null) !== (b === null) && left.length + right.length > 0) return false;
  return JSON.stringify(left) === JSON.stringify(right);
}
