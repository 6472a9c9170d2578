import { boundText, CONTROL_CHARACTER_RANGE, hasControlCharacter } from './text';

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

describe('hasControlCharacter (contract 12)', () => {
  it('finds C0, DEL and C1 characters and nothing else', () => {
    for (const c of ['\u0000', '\t', '\n', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f']) {
      expect(hasControlCharacter(`a${c}b`)).toBe(true);
    }
    for (const text of ['plain', ' spaced ', 'é ü ß', '\u00a0', '😀', '']) expect(hasControlCharacter(text)).toBe(false);
  });
  it('gives the same range to validators that embed it in their own pattern', () => {
    expect(new RegExp(`^[^${CONTROL_CHARACTER_RANGE}]*$`, 'u').test('a\u0085b')).toBe(false);
    expect(new RegExp(`^[^${CONTROL_CHARACTER_RANGE}]*$`, 'u').test('ab')).toBe(true);
  });
});
