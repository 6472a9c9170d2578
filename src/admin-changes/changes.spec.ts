import { adoptedRowsText, byCodePoint, CHANGES_MAX, changesText } from './changes';

describe('AdminChange Changes text (contract 18)', () => {
  it('writes the changed fields only, [before, after], keys in code-point order, no spaces', () => {
    expect(changesText({ name: 'a', active: true, email: null }, { name: 'b', active: true, email: 'x@y' })).toBe('{"email":[null,"x@y"],"name":["a","b"]}');
  });

  it('writes a creation with null before and a deletion with null after', () => {
    expect(changesText(null, { name: 'ops', active: true })).toBe('{"active":[null,true],"name":[null,"ops"]}');
    expect(changesText({ name: 'ops', active: true }, null)).toBe('{"active":[true,null],"name":["ops",null]}');
  });

  it('writes permissions as a sorted array of ids', () => {
    expect(changesText({ permissions: [35, 1] }, { permissions: [34, 1, 35] })).toBe('{"permissions":[[1,35],[1,34,35]]}');
    expect(changesText({ permissions: [35, 1] }, { permissions: [1, 35] })).toBe('{}');
  });

  it('never writes a secret, and counts a changed secret as changed', () => {
    const text = changesText({ password: 'old-hash' }, { password: 'new-hash' }, { secrets: ['password'], alwaysChanged: ['password'] });
    expect(text).toBe('{"password":["(secret)","(secret)"]}');
    expect(changesText(null, { password: 'Secret-Value-1' }, { secrets: ['password'] })).toBe('{"password":[null,"(secret)"]}');
    expect(changesText({ password: null }, { password: 'x' }, { secrets: ['password'] })).toBe('{"password":[null,"(secret)"]}');
  });

  it('escapes text as JSON.stringify does, and writes dates as ISO-8601', () => {
    expect(changesText({ name: 'a"b\\' }, { name: 'é\u2028' })).toBe(`{"name":[${JSON.stringify('a"b\\')},${JSON.stringify('é\u2028')}]}`);
    expect(changesText({ tokensValidFrom: null }, { tokensValidFrom: new Date('2026-11-27T10:00:00.123Z') })).toBe(
      '{"tokensValidFrom":[null,"2026-11-27T10:00:00.123Z"]}',
    );
  });

  it('sorts by code point, not UTF-16 unit', () => {
    expect(['\u{1F600}', '\uFFFF', 'a'].sort(byCodePoint)).toEqual(['a', '\uFFFF', '\u{1F600}']);
  });

  it('caps the text at 8192 characters keeping whole keys and a truncation mark', () => {
    const after: Record<string, string> = {};
    for (let i = 0; i < 40; i++) after[`f${String(i).padStart(2, '0')}`] = 'x'.repeat(400);
    const text = changesText(null, after);
    expect(Array.from(text).length).toBeLessThanOrEqual(CHANGES_MAX);
    expect(text.endsWith(',"…":"truncated"}')).toBe(true);
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const kept = Object.keys(parsed).filter((k) => k !== '…');
    expect(kept[0]).toBe('f00');
    for (const k of kept) expect(parsed[k]).toEqual([null, 'x'.repeat(400)]);
    expect(kept.length).toBeGreaterThan(15);
  });

  it('writes adopted rows as {"rows":[[table,id],…]}', () => {
    expect(adoptedRowsText([['UserLogin', '42'], ['AdminChange', '7']])).toBe('{"rows":[["UserLogin","42"],["AdminChange","7"]]}');
    const many = Array.from({ length: 1000 }, (_, i) => ['UserLogin', String(1_000_000 + i)] as const);
    const text = adoptedRowsText(many);
    expect(Array.from(text).length).toBeLessThanOrEqual(CHANGES_MAX);
    expect((JSON.parse(text) as { rows: unknown[] }).rows.length).toBeGreaterThan(100);
  });
});
