import { closeSync, openSync, readFileSync, writeSync, fsyncSync } from 'node:fs';

/**
 * The --known file: checkpoint notes saved by earlier runs, one after another (each note is its body,
 * a blank line and its signature lines). Blank lines between notes are tolerated. Pure splitting here;
 * reading and appending are the two small functions at the end.
 */
export function splitNotes(text: string): string[] {
  const notes: string[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else if (lines.length > 0) throw new Error('the file does not end in a newline (a note was cut short)');
  let current: string[] = [];
  let inSignatures = false;
  for (const line of lines) {
    if (inSignatures && !line.startsWith('— ')) {
      notes.push(`${current.join('\n')}\n`);
      current = [];
      inSignatures = false;
    }
    if (current.length === 0 && line === '') continue;
    if (!inSignatures && line === '' && current.length > 0) {
      current.push(line);
      inSignatures = true;
      continue;
    }
    if (inSignatures || line !== '') current.push(line);
  }
  if (current.length > 0) {
    if (!inSignatures || !current[current.length - 1].startsWith('— ')) throw new Error('the last note has no signature line');
    notes.push(`${current.join('\n')}\n`);
  }
  return notes;
}

/** The notes of the file, or none when it does not exist yet. */
export function readKnown(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return splitNotes(text);
}

/** Appends a note, creating the file for its owner only (0600), and flushes it to disk. */
export function appendKnown(file: string, note: string): void {
  const fd = openSync(file, 'a', 0o600);
  try {
    writeSync(fd, note);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
