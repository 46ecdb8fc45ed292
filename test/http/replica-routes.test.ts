/**
 * The cluster front answers reads from a standby's replica and forwards writes: every
 * route of the app (Elysia's own table, not a list written here) must be classified, no
 * entry may name a route that does not exist, and no route that commits a record may be
 * answered by a replica (where a commit is refused).
 */
import { beforeAll, expect, test } from 'bun:test';
import { ROUTE_ANSWERERS, routeAnswerer } from '../../src/http/replica-routes.ts';
import { testApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});

const servedKeys = () => [...new Set(t.app.routes.map((route) => `${route.method} ${route.path}`))];

test('every route the app serves is classified, and the table names only routes the app serves', () => {
  const served = servedKeys();
  expect(served.length).toBeGreaterThan(20);
  expect(served.filter((key) => ROUTE_ANSWERERS[key] === undefined)).toEqual([]);
  expect(Object.keys(ROUTE_ANSWERERS).filter((key) => !served.includes(key))).toEqual([]);
});

test('only GETs are answered by a replica; every other method, and the backup, go to the owner', () => {
  for (const [key, answerer] of Object.entries(ROUTE_ANSWERERS)) {
    if (!key.startsWith('GET ')) expect({ key, answerer }).toEqual({ key, answerer: 'owner' });
  }
  expect(ROUTE_ANSWERERS['GET /api/admin/backup']).toBe('owner');
});

test('paths match the table with parameters, HEAD as GET, a static segment before a parameter, the unknown to the owner', () => {
  expect(routeAnswerer('GET', '/api/jobs/01HXYZ')).toBe('replica');
  expect(routeAnswerer('HEAD', '/api/jobs')).toBe('replica');
  expect(routeAnswerer('GET', '/api/events/stream')).toBe('replica');
  expect(routeAnswerer('POST', '/api/jobs/bulk/retry')).toBe('owner');
  expect(routeAnswerer('POST', '/api/jobs/abc/retry')).toBe('owner');
  expect(routeAnswerer('GET', '/api/jobs/')).toBe('owner');
  expect(routeAnswerer('GET', '/api/no-such-route')).toBe('owner');
  expect(routeAnswerer('POST', '/api/ingest')).toBe('owner');
  expect(routeAnswerer('GET', '/api/health')).toBe('node');
  expect(routeAnswerer('GET', '/jobs/abc')).toBe('replica');
});
