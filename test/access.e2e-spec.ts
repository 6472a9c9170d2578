import { startTestApp, TestApp } from './helpers/app';
import { Browser } from './helpers/http';
import { signInAdministrator } from './helpers/users';

/**
 * Deny by default: every route in the OpenAPI document that is not marked public must refuse an
 * anonymous caller with 401. New routes are picked up automatically.
 */
describe('every protected route refuses an anonymous caller', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => t.close());

  it('answers 401 problem+json to anonymous calls of every non-public operation', async () => {
    const { token } = await signInAdministrator(t);
    const document = (await new Browser(t.url).get('/swagger/v1/swagger.json', { authorization: `Bearer ${token}` })).json;
    const operations: Array<{ method: string; path: string }> = [];
    const publicOperations: string[] = [];
    for (const [path, item] of Object.entries<Record<string, { security?: unknown[] }>>(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const concrete = path.replace(/\{[^}]+\}/g, '1');
        if (Array.isArray(operation.security) && operation.security.length === 0) publicOperations.push(`${method} ${path}`);
        else operations.push({ method: method.toUpperCase(), path: concrete });
      }
    }
    expect(operations.length).toBeGreaterThan(0);
    expect(publicOperations).toEqual(
      expect.arrayContaining(['post /api/Authentication/ByUserNamePassword', 'get /health/live', 'get /health/ready']),
    );
    // The probes are public on purpose (a load balancer carries no credential) and say nothing but a status.
    for (const path of ['/health/live', '/health/ready']) {
      const res = await new Browser(t.url).get(path);
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['status']);
    }
    const anonymous = new Browser(t.url);
    for (const { method, path } of operations) {
      const res = await anonymous.request(method, path, method === 'GET' ? {} : { body: {} });
      expect({ method, path, status: res.status }).toEqual({ method, path, status: 401 });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });
});
