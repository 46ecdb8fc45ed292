/**
 * The cluster front answers reads from a standby's replica and forwards writes: every
 * route of the app (Elysia's own table, not a list written here) must be classified, no
 * entry may name a route that does not exist, and no route answered by a replica may
 * commit a record (a replica's log refuses every append): each is called on an app whose
 * log refuses, with data to find, and none tries to append.
 */
import { beforeAll, expect, test } from 'bun:test';
import { DomainError } from '../../actors/domain-error.ts';
import { inMemoryLog } from '../../actors/engine.ts';
import { ROUTE_ANSWERERS, routeAnswerer } from '../../src/http/replica-routes.ts';
import { jobEvent } from '../support/events.ts';
import { BASE, T0, testApp, type TestApp } from '../support/test-app.ts';

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
  expect(ROUTE_ANSWERERS['POST /api/admin/backup']).toBe('owner');
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

test('no route a replica answers tries to commit: on an app whose log refuses (as a replica\'s does), each answers without an append', async () => {
  let replica = false;
  const attempts: unknown[] = [];
  const app = await testApp({
    log: {
      append: (record) => {
        if (!replica) return inMemoryLog.append(record);
        attempts.push(record);
        throw new DomainError('SERVICE_UNAVAILABLE', 'this node does not own the log');
      },
    },
  });
  const cookie = await app.login();
  const connection = await app.createConnection(cookie, 'replica-reads');
  expect((await app.ingest(connection.apiKey, [jobEvent(connection.id, T0 - 1_000, { externalId: 'job-1', state: 'failed' })])).status).toBe(200);
  const jobId = (await app.request('GET', '/api/jobs', { headers: { cookie } })).json.data[0].id as string;
  expect((await app.request('POST', `/api/jobs/${jobId}/retry`, { headers: { cookie, 'content-type': 'application/json' }, rawBody: '{}' })).status).toBe(200); // a pending command for the agent's poll

  replica = true;
  const answered: string[] = [];
  for (const [key, answerer] of Object.entries(ROUTE_ANSWERERS)) {
    if (answerer !== 'replica') continue;
    const path = key.slice('GET '.length).replace(':id', jobId).replace(':name', 'no-such-asset.js');
    const query = path === '/api/events/stream' ? `?connectionId=${connection.id}` : '';
    const closing = new AbortController();
    const response = await app.app.handle(
      new Request(BASE + path + query, { headers: { cookie, authorization: `Bearer ${connection.apiKey}` }, signal: closing.signal }),
    );
    closing.abort(); // a live stream stays open: its status is the answer
    await response.body?.cancel().catch(() => undefined);
    answered.push(`${key} ${response.status}`);
    expect({ key, status: response.status }).not.toEqual({ key, status: 503 });
  }
  expect(answered.length).toBeGreaterThan(15);
  expect(answered).toContain('GET /api/agent/commands 200');
  expect(answered).toContain('GET /api/auth/me 200');
  expect(attempts).toEqual([]);
});
