// The server's code tables (failure and logout reasons, schemes, stages, queues, permissions), read
// from the module the server generates from its own constants at start (src/web/code-tables.ts,
// decision 0024). No page keeps a copy: a name shown here is a name the server knows.
import { CODE_TABLES } from './code-tables.js';

/** @param {string} name */
function table(name) {
  const codes = CODE_TABLES[name];
  // A page asking for a table the server does not serve is a bug to see at once, not an empty filter.
  if (!codes) throw new Error(`no code table ${name}`);
  return codes;
}

/**
 * A table's [id, name] pairs in the server's order: the options of a filter.
 * @param {string} name
 * @returns {[number, string][]}
 */
export const codeOptions = (name) => table(name).map((code) => [code.id, code.name]);

/**
 * The id of the code whose server key (enum member) is `key`, e.g. codeId('permissions', 'ReadWriteSecurityRole').
 * @param {string} name @param {string} key
 */
export function codeId(name, key) {
  const code = table(name).find((c) => c.key === key);
  if (!code) throw new Error(`no code ${key} in ${name}`);
  return code.id;
}

/** The name of code `id`, or undefined when the server has none. @param {string} name @param {unknown} id */
export const codeName = (name, id) => table(name).find((c) => c.id === id)?.name;

/** What code `id` means where its name does not say it (shown under it), or undefined. @param {string} name @param {unknown} id */
export const codeNote = (name, id) => table(name).find((c) => c.id === id)?.note;
