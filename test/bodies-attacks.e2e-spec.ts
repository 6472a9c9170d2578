import { startTestApp, TestApp } from './helpers/app';
import { requestWithoutCookies } from './helpers/api-keys';
import { insertUser, signInAdministrator } from './helpers/users';

/**
 * Contract 13, bodies, attacked at every route that takes a JSON body (found in the service's own
 * OpenAPI document) and every route with a path parameter: bodies at depth 31, 32 and 33 placed in
 * each field a DTO has, top-level values that are no object, wide bodies up to the size limit,
 * prototype keys, numbers that no column holds, path ids out of range. Whatever the route, the answer
 * is never a 5xx, and depth 33 is always the 400 of the depth rule.
 */
const DEEP_DETAIL = 'The request body is nested deeper than 32 levels.';
const nestedArray = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const nestedObject = (depth: number): string => '{"a":'.repeat(depth - 1) + '{}' + '}'.repeat(depth - 1);

/** The fields a body of this route may have, from its schema in the document. */
function fieldsOf(document: any, operation: any): string[] {
  let schema = operation?.requestBody?.content?.['application/json']?.schema;
  if (schema?.$ref) schema = document.components.schemas[schema.$ref.split('/').pop()];
  return Object.keys(schema?.properties ?? {});
}

describe('hostile bodies at every JSON route (contract 13)', () => {
  let t: TestApp;
  let token: string;
  let document: any;
  let routes: Array<{ method: string; path: string; fields: string[] }>;
  let target: string;
  const problems: string[] = [];

  const send = async (method: string, path: string, body: string | undefined, label: string) => {
    const res = await fetch(`${t.url}${path}`, {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}` },
      body,
    });
    const text = await res.text();
    if (res.status >= 500) problems.push(`${method} ${path} ${label}: ${res.status} ${text.slice(0, 200)}`);
    return { status: res.status, text };
  };

  beforeAll(async () => {
    t = await startTestApp();
    ({ token } = await signInAdministrator(t));
    // Ids in paths name a user of its own, so nothing done to it (deleted, revoked) touches the caller.
    target = String((await insertUser(t, { name: 'target', password: 'Corr3ct-Horse-Battery' })).id);
    document = (await requestWithoutCookies(`${t.url}/swagger/v1/swagger.json`, 'GET', { authorization: `Bearer ${token}` })).json;
    routes = [];
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(operations)) {
        if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
        routes.push({ method: method.toUpperCase(), path, fields: fieldsOf(document, operation) });
      }
    }
  });
  afterAll(async () => t.close());
  afterEach(() => {
    expect(problems.splice(0)).toEqual([]);
  });

  const withIds = (path: string, id = target) => path.replace(/\{[^}]+\}/g, id);
  // ChangePassword verifies the caller's own password: wrong values would lock the caller out of the
  // rest of the walk (its hostile bodies are the sign-in's, covered through ByUserNamePassword).
  const bodyRoutes = () => routes.filter((r) => r.method !== 'GET' && r.fields.length > 0 && !r.path.endsWith('/ChangePassword'));

  it('finds routes with bodies and fields', () => {
    expect(bodyRoutes().length).toBeGreaterThanOrEqual(9);
  });

  it('depth 31, 32 and 33 in every field of every body: never a 5xx; 33 is always the depth refusal', async () => {
    for (const { method, path, fields } of bodyRoutes()) {
      for (const field of fields) {
        for (const depth of [31, 32, 33]) {
          // The field's value is nested depth - 1 deep, inside the body's own object: depth in all.
          for (const value of [nestedArray(depth - 1), nestedObject(depth - 1)]) {
            const res = await send(method, withIds(path), `{"${field}":${value}}`, `${field} at depth ${depth}`);
            if (depth === 33 && (res.status !== 400 || !res.text.includes(DEEP_DETAIL))) problems.push(`${method} ${path} ${field} depth 33: ${res.status}`);
            if (depth < 33 && res.text.includes(DEEP_DETAIL)) problems.push(`${method} ${path} ${field} depth ${depth} refused as too deep`);
          }
        }
      }
    }
  });

  it('bodies that are no object, wide bodies, prototype keys and numbers no column holds: never a 5xx', async () => {
    const wideArray = `[${Array.from({ length: 8000 }, () => '1').join(',')}]`;
    const wideObject = `{${Array.from({ length: 2500 }, (_, i) => `"k${i}":1`).join(',')}}`;
    for (const { method, path, fields } of bodyRoutes()) {
      for (const body of ['[]', '[{}]', '"text"', '123', 'null', 'true', '{}', wideArray, wideObject, '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"admin":true}}}']) {
        await send(method, withIds(path), body, body.slice(0, 30));
      }
      for (const field of fields) {
        for (const value of ['2147483648', '-2147483649', '1e400', '-1e400', '99999999999999999999999', '1.5', '-1', '0', '"\\u0000"', '"\\ud800"', `"${'x'.repeat(30_000)}"`, wideArray, '{}', 'null', '[null]', '["1"]', '[1e400]', '[2147483648]']) {
          await send(method, withIds(path), `{"${field}":${value}}`, `${field}=${value.slice(0, 30)}`);
        }
      }
    }
  });

  it('path ids out of range or malformed on every route with a parameter: never a 5xx', async () => {
    for (const { method, path } of routes.filter((r) => r.path.includes('{'))) {
      for (const id of ['2147483648', '99999999999999999999', '-1', '0', '1.5', '1e3', 'abc', '%00', '%ff', '00000000-0000-0000-0000-000000000000', 'x'.repeat(500)]) {
        await send(method, withIds(path, id), method === 'GET' || method === 'DELETE' ? undefined : '{}', `id ${id.slice(0, 20)}`);
      }
    }
  });
});
