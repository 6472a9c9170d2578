import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies } from './helpers/api-keys';
import { signInAdministrator } from './helpers/users';

/**
 * Contract 13, bodies: JSON nested deeper than 32 levels is a 400 problem, refused before any
 * transformation or validation (class-transformer recursion used to overflow the stack: 500, and a
 * full stack trace in the log each time). Every route that takes a body is found in the service's own
 * OpenAPI document, so a route added later is covered too.
 */
const DEEP_DETAIL = 'The request body is nested deeper than 32 levels.';

const nestedObject = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);
const nestedArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
/** Deep inside an otherwise plausible body, where a DTO field would be. */
const nestedField = (depth: number): string => `{"name":"x","permissions":${nestedArray(depth - 1)}}`;

describe('deeply nested JSON bodies (contract 13)', () => {
  let t: TestApp;
  let token: string;
  let routes: Array<{ method: string; path: string }>;
  const logged: string[] = [];
  let restore: Array<() => void> = [];

  beforeAll(async () => {
    t = await startTestApp();
    ({ token } = await signInAdministrator(t));
    const document = await requestWithoutCookies(`${t.url}/swagger/v1/swagger.json`, 'GET', { authorization: `Bearer ${token}` });
    expect(document.status).toBe(200);
    routes = [];
    for (const [path, operations] of Object.entries(document.json.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        if (['post', 'put', 'patch', 'delete'].includes(method)) routes.push({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, '1') });
      }
    }
    // Everything the service writes to its log while the hostile bodies arrive.
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: unknown, ...rest: unknown[]) => {
        logged.push(String(chunk));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => (stream.write = original));
    }
  });
  afterAll(async () => {
    restore.forEach((undo) => undo());
    restore = [];
    await t.close();
  });

  it('finds the body-taking routes in the OpenAPI document', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    for (const expected of [
      'POST /api/Authentication/ByUserNamePassword',
      'POST /api/Authentication/ChangePassword',
      'POST /api/TenantRegistry',
      'PUT /api/TenantRegistry/1',
      'POST /api/RoleRegistry',
      'POST /api/UserRegistry',
      'PUT /api/UserRegistry/1',
      'POST /api/UserRegistry/1/Password',
      'POST /api/UserRegistry/1/ApiKey',
    ]) {
      expect(names).toContain(expected);
    }
  });

  it.each([33, 34, 100, 1000, 10_000])('refuses depth %i at every route with a 400 problem, never a 5xx, logging nothing', async (depth) => {
    const start = logged.length;
    for (const { method, path } of routes) {
      for (const body of [nestedObject(depth), nestedArray(depth), nestedField(depth)]) {
        if (body.length > 32 * 1024) continue;
        const res = await fetch(`${t.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body,
        });
        const json = await res.json();
        expect({ route: `${method} ${path}`, status: res.status, detail: json.detail }).toEqual({ route: `${method} ${path}`, status: 400, detail: DEEP_DETAIL });
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
    }
    expect(logged.slice(start).join('')).toBe('');
  });

  it('refuses before anything runs: an anonymous deep body is 400 as well, not 401, and no sign-in row is written', async () => {
    const rows = async () => (await t.db.query(`SELECT 1 FROM "UserLogin"`)).length;
    const before = await rows();
    const res = await fetch(`${t.url}/api/Authentication/ByUserNamePassword`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"userName":"Administrator","password":"x","mfa":${nestedArray(5000)}}`,
    });
    expect(res.status).toBe(400);
    expect(await rows()).toBe(before);
  });

  it('lets depth 32 through to the ordinary validation (an answer other than the depth refusal, never a 5xx)', async () => {
    for (const { method, path } of routes) {
      for (const body of [nestedObject(32), nestedArray(32), nestedField(32)]) {
        const res = await fetch(`${t.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body,
        });
        const text = await res.text();
        expect({ route: `${method} ${path}`, serverError: res.status >= 500 }).toEqual({ route: `${method} ${path}`, serverError: false });
        expect(text).not.toContain(DEEP_DETAIL);
      }
    }
  });
});
