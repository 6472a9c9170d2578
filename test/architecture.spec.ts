import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import * as ts from 'typescript';

/**
 * The folders of src/ form layers (docs/decisions/0027-layers.md): no folder imports one that imports
 * it back, directly or around a circle. This draws the folder import graph from every relative import
 * of src/ (spec files aside) and fails on any knot (a strongly connected group of folders).
 */

/**
 * Knots known and not yet untied: none. `{telemetry, capture-queues}` and `{database, retention}` are
 * gone, and `{admin-changes, audit-log}` was untied by moving the rows-outside-the-log check and its
 * adoption (which records an AdminChange) into audit-outside/, above both. Any knot fails.
 */
const KNOWN_KNOTS: string[][] = [];

const SRC = join(__dirname, '..', 'src');

/** Every non-spec .ts file under `dir`. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The top-level folder of src/ a path lies in ('' for files directly in src/). */
function folderOf(path: string): string {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0] : '';
}

/** Folder → the folders it imports (relative imports, static and dynamic, type-only included). */
export function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    if (!from) continue;
    const edges = graph.get(from) ?? new Set<string>();
    graph.set(from, edges);
    for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const to = folderOf(normalize(join(dirname(file), fileName)));
      if (to && to !== from) edges.add(to);
    }
  }
  return graph;
}

/** The strongly connected groups of more than one folder (Tarjan), each sorted, sorted by their first folder. */
export function knots(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1) found.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

describe('the folder layers of src/ (docs/decisions/0027-layers.md)', () => {
  it('finds a circle of imports, however long, and nothing else', () => {
    const graph = new Map<string, Set<string>>([
      ['a', new Set(['b'])],
      ['b', new Set(['c', 'd'])],
      ['c', new Set(['a'])],
      ['d', new Set(['e'])],
      ['e', new Set()],
    ]);
    expect(knots(graph)).toEqual([['a', 'b', 'c']]);
    graph.get('e')!.add('d');
    expect(knots(graph)).toEqual([['a', 'b', 'c'], ['d', 'e']]);
  });

  it('has no folder importing one that imports it back, but for the knots listed as known', () => {
    const known = new Set(KNOWN_KNOTS.map((knot) => knot.join(' ')));
    const unexpected = knots(folderGraph()).filter((knot) => !known.has(knot.join(' ')));
    expect(unexpected).toEqual([]);
  });

  it('keeps what every controller imports (access/) below everything but common/ and config/', () => {
    expect([...(folderGraph().get('access') ?? [])].filter((to) => to !== 'common' && to !== 'config')).toEqual([]);
  });

  it('keeps the guard above users and sessions: neither imports guard/, sign-in or the routes above them', () => {
    const graph = folderGraph();
    const above = ['guard', 'login', 'sessions', 'user-admin'];
    for (const below of ['access', 'users', 'session-store', 'sign-in-trail', 'reads', 'mfa']) {
      expect({ below, imports: [...(graph.get(below) ?? [])].filter((to) => above.includes(to)) }).toEqual({ below, imports: [] });
    }
  });
});
