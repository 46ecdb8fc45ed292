/**
 * Where the front sends each route when the connections live on shards (src/shards/shard-routes.ts):
 * every route the app serves (Elysia's own table) is classified and the table names only
 * routes the app serves, so a new route cannot reach the front's application, which keeps no
 * connection, by being forgotten; and the rows that decide correctness are the expected ones.
 */
import { beforeAll, expect, test } from 'bun:test';
import { SHARD_ROUTES, shardRoute } from '../../src/shards/shard-routes.ts';
import { mergeAuditPages, mergeConnectionItems, mergeConnectionLists, mergeCursorPages, mergeMarkers, mergeMe, mergeNumberedPages, refuseTaskMetricsOverShards } from '../../src/shards/shard-merge.ts';
import { singleTestApp, type TestApp } from '../support/test-app.ts';

let t: TestApp;
beforeAll(async () => {
  t = await singleTestApp({ withAdmin: false });
});

test('every route the app serves is classified, and the table names only routes the app serves', () => {
  const served = [...new Set(t.app.routes.map((route) => `${route.method} ${route.path}`))];
  expect(served.length).toBeGreaterThan(20);
  expect(served.filter((key) => SHARD_ROUTES[key] === undefined)).toEqual([]);
  expect(Object.keys(SHARD_ROUTES).filter((key) => !served.includes(key))).toEqual([]);
});

test('what concerns one connection goes to its shard; what spans connections is split and merged; accounts stay on the front', () => {
  expect(shardRoute('POST', '/api/ingest')).toEqual({ by: 'apiKey' });
  expect(shardRoute('POST', '/api/agent/commands/ack')).toEqual({ by: 'apiKey' });
  expect(shardRoute('GET', '/api/agent/commands')).toEqual({ by: 'apiKey' });
  expect(shardRoute('POST', '/api/alert-rules')).toEqual({ by: 'bodyConnection' });
  expect(shardRoute('GET', '/api/jobs')).toEqual({ by: 'split', answer: mergeCursorPages });
  expect(shardRoute('HEAD', '/api/jobs')).toEqual({ by: 'split', answer: mergeCursorPages });
  expect(shardRoute('GET', '/api/queues')).toEqual({ by: 'split', answer: mergeNumberedPages });
  expect(shardRoute('GET', '/api/connections')).toEqual({ by: 'split', answer: mergeConnectionLists });
  expect(shardRoute('GET', '/api/auth/me')).toEqual({ by: 'split', answer: mergeMe });
  expect(shardRoute('POST', '/api/jobs/bulk/retry')).toEqual({ by: 'bulk' });
  expect(shardRoute('GET', '/api/jobs/abc')).toEqual({ by: 'split', answer: 'firstFound' });
  expect(shardRoute('GET', '/api/queues/abc')).toEqual({ by: 'split', answer: 'firstFound' });
  expect(shardRoute('GET', '/api/commands/abc')).toEqual({ by: 'split', answer: 'firstFound' });
  expect(shardRoute('GET', '/api/capabilities')).toEqual({ by: 'split', answer: mergeConnectionItems });
  expect(shardRoute('GET', '/api/audit')).toEqual({ by: 'everywhere', answer: mergeAuditPages });
  // the controls go to the shard keeping their target's connection, as the cluster sends them to its writer
  expect(shardRoute('PUT', '/api/agent/capabilities')).toEqual({ by: 'apiKey' });
  expect(shardRoute('POST', '/api/markers')).toEqual({ by: 'keyOrBodyConnection' });
  expect(shardRoute('DELETE', '/api/markers/m')).toEqual({ by: 'target' });
  expect(shardRoute('GET', '/api/markers')).toEqual({ by: 'split', answer: mergeMarkers });
  expect(shardRoute('GET', '/api/metrics/tasks')).toEqual({ by: 'split', answer: refuseTaskMetricsOverShards });
  expect(shardRoute('POST', '/api/tasks/rate-limit')).toEqual({ by: 'bodyConnection' });
  for (const [method, path] of [
    ['POST', '/api/jobs/abc/retry'],
    ['POST', '/api/jobs/abc/kill'],
    ['POST', '/api/queues/q/pause'],
    ['POST', '/api/queues/q/concurrency'],
    ['POST', '/api/workers/w/stop'],
    ['PATCH', '/api/alert-rules/r'],
    ['DELETE', '/api/alert-channels/c'],
  ]) {
    expect({ method, path, route: shardRoute(method!, path!) }).toEqual({ method, path, route: { by: 'target' } });
  }
  for (const [method, path] of [
    ['POST', '/api/auth/login'],
    ['POST', '/api/connections'],
    ['DELETE', '/api/connections/x'],
    ['POST', '/api/teams'],
    ['PATCH', '/api/teams/t/members/u'],
    ['GET', '/api/views'],
    ['PATCH', '/api/views/v'],
    ['DELETE', '/api/views/v'],
    ['GET', '/api/users'],
    ['GET', '/api/auth/oidc/callback'],
    ['GET', '/api/events/stream'],
    ['POST', '/api/admin/backup'],
    ['GET', '/api/health'],
    ['GET', '/jobs/abc'],
    ['GET', '/api/no-such-route'],
  ]) {
    expect({ method, path, route: shardRoute(method!, path!) }).toEqual({ method, path, route: { by: 'front' } });
  }
});
