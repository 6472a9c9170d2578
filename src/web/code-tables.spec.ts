import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHENTICATION_TYPE_NAMES, FAILURE_TYPE_NAMES, FAILURE_TYPE_NOTES, FailureTypeId, LOGOUT_OUTCOME_NAMES, LOGOUT_REASON_NAMES } from '../sign-in-trail/audit.types';
import { CAPTURE_QUEUE_NAMES } from '../telemetry/telemetry.tables';
import { ARCHIVER_STAGE_NAMES, CASE_CREATION_STAGE_NAMES } from '../telemetry/telemetry.types';
import { Permission, PERMISSION_NAMES, PERMISSION_NOTES } from '../access/permissions';
import { CODE_TABLES_ASSET, codeTable, codeTables, codeTablesModule } from './code-tables';
import { assetsFolder } from './web-assets.service';

/** The tables a page gets: the JSON the generated module exports, parsed back. */
export function parseCodeTablesModule(text: string): ReturnType<typeof codeTables> {
  const match = /^export const CODE_TABLES = ([\s\S]*);\n$/m.exec(text);
  if (!match) throw new Error('not a code tables module');
  return JSON.parse(match[1]);
}

const asNames = (table: ReadonlyArray<{ id: number; name: string }>) => Object.fromEntries(table.map((c) => [c.id, c.name]));

describe('code tables', () => {
  it('are the very names the read row codecs and the seed use, in id order', () => {
    const tables = codeTables();
    expect(asNames(tables.failureReasons)).toEqual(FAILURE_TYPE_NAMES);
    expect(asNames(tables.logoutReasons)).toEqual(LOGOUT_REASON_NAMES);
    expect(asNames(tables.logoutOutcomes)).toEqual(LOGOUT_OUTCOME_NAMES);
    expect(asNames(tables.authenticationTypes)).toEqual(AUTHENTICATION_TYPE_NAMES);
    expect(asNames(tables.archiverStages)).toEqual(ARCHIVER_STAGE_NAMES);
    expect(asNames(tables.caseCreationStages)).toEqual(CASE_CREATION_STAGE_NAMES);
    expect(asNames(tables.captureQueues)).toEqual(CAPTURE_QUEUE_NAMES);
    expect(asNames(tables.permissions)).toEqual(PERMISSION_NAMES);
    for (const table of Object.values(tables)) expect(table.map((c) => c.id)).toEqual([...table.map((c) => c.id)].sort((a, b) => a - b));
  });

  it('key each code by its enum member and carry the page notes beside it', () => {
    const tables = codeTables();
    expect(tables.failureReasons.find((c) => c.key === 'PasswordExpired')).toEqual({
      id: FailureTypeId.PasswordExpired,
      key: 'PasswordExpired',
      name: FAILURE_TYPE_NAMES[FailureTypeId.PasswordExpired],
      note: FAILURE_TYPE_NOTES[FailureTypeId.PasswordExpired],
    });
    expect(tables.permissions).toEqual([
      { id: 34, key: 'ReadWriteSecurityRole', name: 'Read Write Security Role', note: PERMISSION_NOTES[Permission.ReadWriteSecurityRole] },
      { id: 35, key: 'ReadWriteSecurityUser', name: 'Read Write Security User', note: PERMISSION_NOTES[Permission.ReadWriteSecurityUser] },
    ]);
    expect(tables.captureQueues[0]).toEqual({ id: 1, key: 'ModelInvokeWarning', name: 'ModelInvokeWarning' });
  });

  it('refuse a code without a name, a name without a code, and a note for no code', () => {
    enum Two {
      A = 1,
      B = 2,
    }
    expect(() => codeTable(Two, { 1: 'a' })).toThrow('code table mismatch: codes 1,2 but names 1');
    expect(() => codeTable(Two, { 1: 'a', 2: 'b', 3: 'c' })).toThrow('code table mismatch');
    expect(() => codeTable(Two, { 1: 'a', 2: 'b' }, { 7: 'why' })).toThrow('notes for unknown codes: 7');
    expect(codeTable(Two, { 1: 'a', 2: 'b' })).toEqual([
      { id: 1, key: 'A', name: 'a' },
      { id: 2, key: 'B', name: 'b' },
    ]);
  });

  it('become a module that exports exactly the tables, with no `<` to close a script', () => {
    const text = codeTablesModule();
    expect(parseCodeTablesModule(text)).toEqual(codeTables());
    const odd = codeTablesModule({ t: [{ id: 1, key: 'K', name: '</script><b>' }] });
    expect(odd).not.toContain('<');
    expect(parseCodeTablesModule(odd)).toEqual({ t: [{ id: 1, key: 'K', name: '</script><b>' }] });
  });
});

/**
 * No page module keeps its own copy of a code table: no string literal in web/assets equals a name or
 * note the server serves, and no literal pairs an id with a text (`[1, '…']`, `{ 34: '…' }`), the shape
 * every former copy had. A page that needs a name imports it from codes.js.
 */
describe('the page modules', () => {
  const folder = assetsFolder();
  const modules = readdirSync(folder).filter((name) => name.endsWith('.js'));
  const served = new Set(Object.values(codeTables()).flatMap((table) => table.flatMap((c) => [c.name, c.note ?? ''].filter(Boolean))));

  it('include none named like the generated module (it would be a second copy)', () => {
    expect(modules).toContain('codes.js');
    expect(modules).not.toContain(CODE_TABLES_ASSET);
  });

  it.each(modules)('%s holds no copy of a code table', (name) => {
    const source = readFileSync(join(folder, name), 'utf8');
    const literals = [...source.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`([^`$]*)`/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    expect(literals.filter((literal) => served.has(literal))).toEqual([]);
    expect(source.match(/[[{,]\s*\d+\s*[:,]\s*['"`]/g) ?? []).toEqual([]);
  });
});
