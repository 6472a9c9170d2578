import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirectoryRefused, prepareDataDirectory, preparedMessage } from './data-directory';

const mode = (path: string) => lstatSync(path).mode & 0o7777;

describe('prepareDataDirectory', () => {
  let parent: string;
  let umask: number;
  beforeEach(() => {
    umask = process.umask(0o022);
    parent = mkdtempSync(join(tmpdir(), 'tm-datadir-unit-'));
  });
  afterEach(() => process.umask(umask));

  it('creates a missing directory 0700 and says nothing', () => {
    const prepared = prepareDataDirectory(join(parent, 'a', 'data'));
    expect(prepared).toMatchObject({ created: true, tightened: 0 });
    expect(mode(join(parent, 'a', 'data'))).toBe(0o700);
    expect(preparedMessage(prepared)).toBeNull();
  });

  it('takes group and other permissions away from the directory and everything in it, and says how many', () => {
    const data = join(parent, 'data');
    mkdirSync(join(data, 'pglite', 'base'), { recursive: true });
    chmodSync(data, 0o755);
    chmodSync(join(data, 'pglite'), 0o775);
    writeFileSync(join(data, 'pglite', 'base', 'PG_VERSION'), '17');
    chmodSync(join(data, 'pglite', 'base', 'PG_VERSION'), 0o666);
    writeFileSync(join(data, 'secrets.json'), '{}', { mode: 0o600 });
    const prepared = prepareDataDirectory(data);
    expect(prepared.tightened).toBe(4); // data, pglite, base (0755 under umask 022), PG_VERSION
    expect([data, join(data, 'pglite'), join(data, 'pglite', 'base')].map(mode)).toEqual([0o700, 0o700, 0o700]);
    expect(mode(join(data, 'pglite', 'base', 'PG_VERSION'))).toBe(0o600);
    expect(preparedMessage(prepared)).toBe(
      `DataDirectory ${data} was readable or writable by other users: took group and other permissions away from 4 paths (it is for this service's user only)`,
    );
    expect(prepareDataDirectory(data).tightened).toBe(0);
  });

  it('refuses a shared directory, the root, a link inside, and another user\'s directory', () => {
    const shared = join(parent, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(() => prepareDataDirectory(shared)).toThrow(new DataDirectoryRefused(`DataDirectory ${shared} is a shared directory (mode 1777); or set DataDirectory to a directory of its own`));
    expect(mode(shared)).toBe(0o1777);
    expect(() => prepareDataDirectory('/')).toThrow(DataDirectoryRefused);
    const linked = join(parent, 'linked');
    mkdirSync(join(linked, 'spool'), { recursive: true });
    symlinkSync('/etc/passwd', join(linked, 'spool', 'node.UserLogout.jsonl'));
    expect(() => prepareDataDirectory(linked)).toThrow(/holds a symbolic link, .*node\.UserLogout\.jsonl; the service never writes or reads its files through a link: remove it$/);
    const theirs = join(parent, 'theirs');
    mkdirSync(theirs);
    writeFileSync(join(theirs, 'x'), '');
    chownSync(join(theirs, 'x'), 65534, 65534);
    expect(() => prepareDataDirectory(theirs)).toThrow(/holds .*x, which belongs to user 65534/);
  });
});
