import { chmodSync, chownSync, closeSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createPrivateFile,
  ensurePrivateDirectory,
  openPrivateFileForAppend,
  PrivateFileError,
  readPrivateFile,
  readPrivateFileAsync,
  writePrivateFile,
  writePrivateFileAsync,
} from './private-file';

const mode = (path: string) => lstatSync(path).mode & 0o7777;

describe('private files: 0600 whatever the umask, never through a link', () => {
  let dir: string;
  let outside: string;
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0);
    dir = mkdtempSync(join(tmpdir(), 'tm-private-'));
    outside = join(mkdtempSync(join(tmpdir(), 'tm-outside-')), 'target');
    writeFileSync(outside, 'outside\n');
    chmodSync(outside, 0o644);
  });
  afterEach(() => process.umask(umask));

  it('writes 0600 files in 0700 folders under umask 0', async () => {
    writePrivateFile(join(dir, 'a', 'b', 'secret.json'), '{"k":1}');
    expect(readFileSync(join(dir, 'a', 'b', 'secret.json'), 'utf8')).toBe('{"k":1}');
    expect(mode(join(dir, 'a', 'b', 'secret.json'))).toBe(0o600);
    expect(mode(join(dir, 'a'))).toBe(0o700);
    expect(mode(join(dir, 'a', 'b'))).toBe(0o700);
    await writePrivateFileAsync(join(dir, 'spool.jsonl'), 'x\n');
    expect(mode(join(dir, 'spool.jsonl'))).toBe(0o600);
    const handle = await openPrivateFileForAppend(join(dir, 'append.jsonl'));
    await handle.close();
    expect(mode(join(dir, 'append.jsonl'))).toBe(0o600);
    closeSync(createPrivateFile(join(dir, 'lock.pid')));
    expect(mode(join(dir, 'lock.pid'))).toBe(0o600);
    // No temporary file is left beside them.
    expect(readdirSync(dir).sort()).toEqual(['a', 'append.jsonl', 'lock.pid', 'spool.jsonl']);
  });

  it('narrows an existing file or folder of its own to 0600 / 0700', async () => {
    writeFileSync(join(dir, 'old.json'), '{}', { mode: 0o666 });
    expect(readPrivateFile(join(dir, 'old.json'))).toBe('{}');
    expect(mode(join(dir, 'old.json'))).toBe(0o600);
    mkdirSync(join(dir, 'spool'), { mode: 0o755 });
    ensurePrivateDirectory(join(dir, 'spool'));
    expect(mode(join(dir, 'spool'))).toBe(0o700);
    writeFileSync(join(dir, 'old.jsonl'), '', { mode: 0o644 });
    await (await openPrivateFileForAppend(join(dir, 'old.jsonl'))).close();
    expect(mode(join(dir, 'old.jsonl'))).toBe(0o600);
  });

  it('never reads, appends to or creates through a planted link; the target is untouched', async () => {
    const link = join(dir, 'planted');
    symlinkSync(outside, link);
    expect(() => readPrivateFile(link)).toThrow(PrivateFileError);
    expect(() => readPrivateFile(link)).toThrow(`${link} is a symbolic link`);
    await expect(readPrivateFileAsync(link)).rejects.toThrow(PrivateFileError);
    await expect(openPrivateFileForAppend(link)).rejects.toThrow(PrivateFileError);
    expect(() => createPrivateFile(link)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    // A dangling link: creating through it would make a file wherever it points.
    const dangling = join(dir, 'dangling');
    const nowhere = join(dir, '..', `tm-nowhere-${process.pid}`);
    symlinkSync(nowhere, dangling);
    expect(() => createPrivateFile(dangling)).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    await expect(openPrivateFileForAppend(dangling)).rejects.toThrow(PrivateFileError);
    expect(existsSync(nowhere)).toBe(false);
    // A whole write replaces the link itself, never its target.
    writePrivateFile(link, 'mine');
    expect(lstatSync(link).isSymbolicLink()).toBe(false);
    expect(readFileSync(link, 'utf8')).toBe('mine');
    expect(readFileSync(outside, 'utf8')).toBe('outside\n');
    expect(mode(outside)).toBe(0o644);
    // A link where a folder should be is refused.
    symlinkSync(join(outside, '..'), join(dir, 'spool'));
    expect(() => ensurePrivateDirectory(join(dir, 'spool'))).toThrow(PrivateFileError);
    expect(mode(join(outside, '..'))).toBe(0o700);
  });

  it('refuses a file of another user', () => {
    writeFileSync(join(dir, 'theirs.json'), '{}');
    chownSync(join(dir, 'theirs.json'), 65534, 65534);
    expect(() => readPrivateFile(join(dir, 'theirs.json'))).toThrow(/belongs to user 65534/);
  });
});
