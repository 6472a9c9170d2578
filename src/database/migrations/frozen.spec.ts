import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';

/**
 * Migrations are frozen (STYLE.md 15): each carries its own copy of every list and helper it needs, so a
 * change to the service's code (a table added to a list, a helper's rule changed) can never change what
 * an install that already ran them, or a fresh install running them today, gets. They import nothing but
 * TypeORM and files of their own folder.
 */
describe('migrations import nothing outside their folder', () => {
  const folder = __dirname;
  const files = readdirSync(folder).filter((f) => f.endsWith('.ts') && !f.endsWith('.spec.ts'));

  it.each(files)('%s', (file) => {
    const text = readFileSync(join(folder, file), 'utf8');
    const sources = [...text.matchAll(/(?:from\s+|require\(\s*|import\(\s*)['"]([^'"]+)['"]/g)].map((m) => m[1]);
    const outside = sources.filter((s) => s !== 'typeorm' && !/^\.\/[^/]+$/.test(s));
    expect(outside).toEqual([]);
  });

  it('finds the migrations it checks', () => {
    expect(files.length).toBeGreaterThan(10);
  });
});
