/**
 * The document and the app's route table (Elysia's own list of what it serves, not a
 * list written here) name the same operations: every route is documented with its
 * method and path, or is one of the few left out on purpose; every documented operation
 * is served; and each has its entry in src/openapi/operations.ts, not the bare line the
 * generator writes for a route it knows nothing about.
 */
import { beforeAll, describe, expect, test } from 'bun:test';
import { isUndocumented, openApiPath, operationKey, UNDOCUMENTED_ROUTES } from '../../src/openapi/build-document.ts';
import { OPERATIONS } from '../../src/openapi/operations.ts';
import { testApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
let document: { paths: Record<string, Record<string, { summary?: string; responses?: Record<string, unknown> }>> };

beforeAll(async () => {
  t = await testApp();
  document = (await t.request('GET', '/openapi.json')).json;
});

const served = () => t.app.routes.map((route) => ({ method: route.method, path: route.path }));
const documentedKeys = () =>
  Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));

describe('the document and the route table', () => {
  test('every route the app serves is documented with the same method and path, and nothing documented is missing from the app', () => {
    const servedKeys = served()
      .filter((route) => !isUndocumented(route))
      .map((route) => `${route.method} ${openApiPath(route.path)}`);
    expect(servedKeys.length).toBeGreaterThan(20);
    expect(documentedKeys().sort()).toEqual([...new Set(servedKeys)].sort());
  });

  test('the service routes named in docs/api.md are among them', () => {
    for (const key of ['POST /api/ingest', 'GET /api/agent/commands', 'POST /api/agent/commands/ack', 'GET /api/agent/connection', 'POST /api/admin/backup', 'GET /api/health', 'GET /docs/errors', 'GET /api/events/stream', 'GET /openapi.json', 'GET /docs']) {
      expect(documentedKeys()).toContain(key);
    }
  });

  test('every documented route has its entry in operations.ts (summary and a success answer), and no entry names a route that does not exist', () => {
    const routeKeys = served().filter((route) => !isUndocumented(route)).map(operationKey);
    expect(routeKeys.filter((key) => OPERATIONS[key] === undefined)).toEqual([]);
    expect(Object.keys(OPERATIONS).filter((key) => !routeKeys.includes(key))).toEqual([]);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        // a success is 2xx, or for the routes a browser navigates (single sign-on) a redirect
        const successes = Object.keys(operation.responses ?? {}).filter((status) => status.startsWith('2') || status.startsWith('3'));
        expect({ operation: `${method} ${path}`, summary: typeof operation.summary, successes: successes.length > 0 }).toEqual({ operation: `${method} ${path}`, summary: 'string', successes: true });
      }
    }
  });

  test('left out on purpose: only the dashboard pages and assets, each of which the app does serve', () => {
    const left = served().filter(isUndocumented);
    expect(left.every((route) => route.method === 'GET' && !route.path.startsWith('/api/'))).toBe(true);
    const listed = UNDOCUMENTED_ROUTES.flatMap((group) => group.paths.map((path) => `${group.method} ${path}`));
    expect(left.map(operationKey).sort()).toEqual(listed.sort());
    for (const group of UNDOCUMENTED_ROUTES) expect(group.reason.length).toBeGreaterThan(10);
  });
});
