import { splitNotes } from './known';

const note = (size: number): string => `origin\n${size}\nAAAA\n\n— origin c2lnbmF0dXJl\n`;

describe('the --known file', () => {
  it('splits notes written one after another, with or without blank lines between them', () => {
    expect(splitNotes('')).toEqual([]);
    expect(splitNotes(note(1))).toEqual([note(1)]);
    expect(splitNotes(note(1) + note(2) + note(3))).toEqual([note(1), note(2), note(3)]);
    expect(splitNotes(`\n${note(1)}\n\n${note(2)}`)).toEqual([note(1), note(2)]);
    const twoSignatures = `origin\n4\nAAAA\n\n— origin c2ln\n— witness d2l0\n`;
    expect(splitNotes(twoSignatures + note(5))).toEqual([twoSignatures, note(5)]);
  });

  it('refuses a file whose last note was cut short', () => {
    expect(() => splitNotes(note(1).slice(0, -1))).toThrow(/newline/);
    expect(() => splitNotes(`${note(1)}origin\n2\nAAAA\n`)).toThrow(/no signature/);
  });
});
