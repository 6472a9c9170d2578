import { canonicalRow, leafRecord, sha256 } from '../canonical';
import { leafHash } from '../merkle';
import type { ServedLeaf } from './client';
import { checkLeaf } from './leaf-checks';

const row = {
  Id: '5', CreatedDate: '2026-11-25T19:19:32.123456Z', CreatedUser: 'alice', UserRegistryId: '7', TenantRegistryId: '3',
  AuthenticationTypeId: '1', Failed: 'f', FailureTypeId: null, FailureMessage: null, RemoteIp: null, LocalIp: null, UserAgent: null,
};

/** A leaf as the Leaves route serves it, with its hashes made consistent for the given record fields. */
function served(canonical: Buffer | null, fields: { rowId?: string; date?: string; index?: number } = {}): ServedLeaf {
  const rowHash = sha256(canonical ?? canonicalRow('UserLogin', row));
  const rowId = fields.rowId ?? '5';
  const date = fields.date ?? row.CreatedDate;
  return {
    leafIndex: fields.index ?? 3,
    table: 'UserLogin',
    rowId,
    rowCreatedDate: date,
    rowHash: rowHash.toString('base64'),
    leafHash: leafHash(leafRecord('UserLogin', rowId, date, rowHash)).toString('base64'),
    canonical: canonical === null ? null : canonical.toString('utf8'),
  };
}

describe('the checks one leaf proves by itself', () => {
  it('accepts a leaf whose row is there or gone', () => {
    const ok = checkLeaf(served(canonicalRow('UserLogin', row)), 3);
    expect(ok.ok && ok.leaf.canonical !== null).toBe(true);
    const gone = checkLeaf(served(null), 3);
    expect(gone.ok && gone.leaf.canonical === null).toBe(true);
  });

  it('refuses a sealed row that names another id or date than its leaf, even with every hash recomputed', () => {
    expect(checkLeaf(served(canonicalRow('UserLogin', row), { rowId: '6' }), 3)).toEqual({
      ok: false,
      problem: 'leaf 3 (UserLogin 6): the row\'s table, id or date (UserLogin 5 2026-11-25T19:19:32.123456Z) is not the leaf\'s (leaf changed)',
    });
    expect(checkLeaf(served(canonicalRow('UserLogin', row), { date: '2026-11-25T19:19:32.123457Z' }), 3).ok).toBe(false);
  });

  it('refuses a leaf hash that is not its record\'s, a bad table, a bad date, a gap and a step back', () => {
    const leaf = served(canonicalRow('UserLogin', row));
    expect(checkLeaf({ ...leaf, leafHash: leaf.rowHash }, 3)).toEqual({ ok: false, problem: 'leaf 3 (UserLogin 5): its leaf hash is not the hash of its leaf record (leaf changed)' });
    expect(checkLeaf({ ...leaf, table: 'Users' }, 3)).toEqual({ ok: false, problem: 'leaf 3 (Users 5): not an audit table (leaf changed)' });
    expect(checkLeaf({ ...leaf, rowCreatedDate: '2026-11-25T19:19:32Z' }, 3).ok).toBe(false);
    expect(checkLeaf({ ...leaf, rowHash: 'AAAA' }, 3).ok).toBe(false);
    expect(checkLeaf(leaf, 2)).toEqual({ ok: false, problem: 'leaf 2: missing, the log jumps to leaf 3 (a leaf was deleted)' });
    expect(checkLeaf(leaf, 4)).toEqual({ ok: false, problem: 'leaf 4: the service answered leaf 3 in its place (leaves duplicated or reordered)' });
  });
});
