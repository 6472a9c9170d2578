import { boundText } from './text';

describe('boundText (contract 12)', () => {
  it('removes C0 (tab included), DEL and C1 control characters, then cuts to the bound', () => {
    expect(boundText('a\tb\u0000c\u001b[2Jd\u007fe\u0085f\u009fg', 100)).toBe('abc[2Jdefg');
    expect(boundText('x'.repeat(600), 512)).toHaveLength(512);
    expect(boundText('\u0000'.repeat(10) + 'ok', 2)).toBe('ok');
  });
  it('keeps null as null and never splits a surrogate pair', () => {
    expect(boundText(null, 5)).toBeNull();
    expect(boundText(undefined, 5)).toBeNull();
    expect(boundText('ab😀cd', 3)).toBe('ab😀');
  });
});
