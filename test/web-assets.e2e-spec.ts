import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { assetsFolder } from '../src/web/web-assets.service';

/**
 * The page modules are served as they are written, without a bundler (decision 0030): every module
 * of web/assets, the ones split out of the grid and Users pages included, is served as JavaScript
 * with the same cache and security headers; every module a page imports is one the service serves;
 * and the type declarations and specs beside them, which only the lint reads, are not served.
 */
describe('the page modules as the browser fetches them', () => {
  let t: TestApp;
  let http: Browser;
  const files = readdirSync(assetsFolder());
  const modules = files.filter((name) => name.endsWith('.js'));

  beforeAll(async () => {
    t = await startTestApp();
    http = new Browser(t.url);
  });

  afterAll(async () => {
    await t?.close();
  });

  it('each module is served as JavaScript with its ETag, revalidated at each use, and answers 304 to its ETag', async () => {
    expect(modules).toEqual(expect.arrayContaining(['grid-page.js', 'grid-state.js', 'master-detail.js', 'users.js', 'users-detail.js']));
    for (const name of modules) {
      const res = await http.get(`/assets/${name}`);
      expect([name, res.status]).toEqual([name, 200]);
      expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self'(;|$)/);
      expect(res.text).toBe(readFileSync(join(assetsFolder(), name), 'utf8'));
      const etag = res.headers.get('etag')!;
      expect(etag).toMatch(/^"[\w-]{22}"$/);
      expect((await http.get(`/assets/${name}`, { 'if-none-match': etag })).status).toBe(304);
    }
  });

  it('every module a page imports is served', async () => {
    const imported = new Set(modules.flatMap((name) => [...readFileSync(join(assetsFolder(), name), 'utf8').matchAll(/^import [^'"]*['"]\.\/([\w-]+\.js)['"];$/gm)].map((m) => m[1])));
    expect([...imported]).toEqual(expect.arrayContaining(['master-detail.js', 'grid-table.js', 'code-tables.js']));
    for (const name of imported) expect([name, (await http.get(`/assets/${name}`)).status]).toEqual([name, 200]);
  });

  it('the type declarations and unit specs beside the modules are not served', async () => {
    const typesOnly = files.filter((name) => name.endsWith('.ts'));
    expect(typesOnly).toEqual(expect.arrayContaining(['api-types.d.ts', 'chart.spec.ts']));
    for (const name of typesOnly) expect([name, (await http.get(`/assets/${name}`)).status]).toEqual([name, 404]);
  });
});
