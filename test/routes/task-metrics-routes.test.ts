/**
 * GET /api/metrics/tasks, GET /api/metrics/series and the markers routes, through the app:
 * who may read and write, what the answers hold, and what is refused (every answer is also
 * checked against the OpenAPI document by the test app).
 */
import { beforeEach, describe, expect, test } from 'bun:test';
import { binOfMs, binValueMs } from '../../actors/metrics/duration-bins.ts';
import { iso, jobEvent } from '../support/events.ts';
import { T0, testApp, type TestApp } from '../support/test-app.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

let app: TestApp;
let cookie: string;
let connection: { id: string; apiKey: string };

/** A job of `name` that waited `waitMs`, ran `runMs` and finished at `endMs`. */
function run(connectionId: string, externalId: string, name: string, endMs: number, runMs: number, waitMs: number, state = 'completed') {
  const startMs = endMs - runMs;
  const job = { externalId, name, queue: 'default', createdAt: iso(startMs - waitMs) };
  return [
    jobEvent(connectionId, startMs, { ...job, state: 'active', startedAt: iso(startMs) }),
    jobEvent(connectionId, endMs, { ...job, state, startedAt: iso(startMs), completedAt: iso(endMs) }),
  ];
}

beforeEach(async () => {
  app = await testApp();
  cookie = await app.login();
  connection = await app.createConnection(cookie, 'prod');
  const events = [
    ...run(connection.id, 'a1', 'mail.send', T0 - 10 * MINUTE_MS, 200, 1_000),
    ...run(connection.id, 'a2', 'mail.send', T0 - 20 * MINUTE_MS, 400, 3_000, 'failed'),
    ...run(connection.id, 'a3', 'mail.send', T0 - 30 * HOUR_MS, 100, 10),
    ...run(connection.id, 'b1', 'reports.nightly', T0 - 5 * MINUTE_MS, 90_000, 20),
  ];
  expect((await app.ingest(connection.apiKey, events)).json.accepted).toBe(events.length);
});

const get = (path: string, as = cookie) => app.request('GET', path, { headers: { cookie: as } });

describe('GET /api/metrics/tasks', () => {
  test('given jobs of two tasks, then each has a row with its counts, percentiles and the period before beside it', async () => {
    const answer = await get('/api/metrics/tasks');
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ from: iso(T0 - DAY_MS), to: iso(T0), previousFrom: iso(T0 - 2 * DAY_MS), previousTo: iso(T0 - DAY_MS), tier: 'minute', foldedSeries: 0 });
    const mail = answer.json.data.find((row: { task: string }) => row.task === 'mail.send');
    expect(mail.current).toMatchObject({ completed: 1, failed: 1, retried: 0, cancelled: 0, failureRate: 0.5 });
    expect(mail.current.runTime).toEqual({ count: 2, p50: binValueMs(binOfMs(200)), p95: binValueMs(binOfMs(400)), p99: binValueMs(binOfMs(400)) });
    expect(mail.current.waitTime.count).toBe(2);
    expect(mail.current.throughputPerMinute).toBeCloseTo(2 / (24 * 60), 10);
    expect(mail.previous).toMatchObject({ completed: 1, failed: 0 });
    expect(mail.spark).toHaveLength(24);
    expect(answer.json.data.map((row: { task: string }) => row.task)).toEqual(['mail.send', 'reports.nightly']);
  });

  test('given a sort by p95 run time descending, then the slowest task comes first', async () => {
    const answer = await get('/api/metrics/tasks?sortBy=runP95&sortOrder=desc&spark=runP95');
    expect(answer.json.data.map((row: { task: string }) => row.task)).toEqual(['reports.nightly', 'mail.send']);
  });

  test("given another user, then the connection's tasks are not theirs to read", async () => {
    const other = await app.createUser(cookie, 'other@example.com');
    expect((await get('/api/metrics/tasks', other)).json.data).toEqual([]);
    expect((await get(`/api/metrics/tasks?connectionId=${connection.id}`, other)).json.data).toEqual([]);
  });

  test('given no session, then 401; given a range ending before it starts, or a date that is not one, then 400 naming the field', async () => {
    expect((await app.request('GET', '/api/metrics/tasks')).status).toBe(401);
    const backwards = await get(`/api/metrics/tasks?from=${iso(T0)}&to=${iso(T0 - HOUR_MS)}`);
    expect(backwards.status).toBe(400);
    expect(backwards.json.error.details).toHaveProperty('from');
    const garbled = await get('/api/metrics/tasks?to=yesterday');
    expect(garbled.json.error.details).toHaveProperty('to');
    expect((await get('/api/metrics/tasks?sortBy=color')).status).toBe(400);
  });
});

describe('GET /api/metrics/series', () => {
  test("given a task, then its counts step by step, the step's start as `at`", async () => {
    const answer = await get(`/api/metrics/series?task=mail.send&measure=counts&from=${iso(T0 - HOUR_MS)}&to=${iso(T0)}&step=15m`);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ measure: 'counts', tier: 'minute', stepMs: 15 * MINUTE_MS, from: iso(T0 - HOUR_MS), to: iso(T0) });
    expect(answer.json.points).toEqual([
      { at: iso(T0 - HOUR_MS), completed: 0, failed: 0, retried: 0, cancelled: 0 },
      { at: iso(T0 - 45 * MINUTE_MS), completed: 0, failed: 0, retried: 0, cancelled: 0 },
      { at: iso(T0 - 30 * MINUTE_MS), completed: 0, failed: 1, retried: 0, cancelled: 0 },
      { at: iso(T0 - 15 * MINUTE_MS), completed: 1, failed: 0, retried: 0, cancelled: 0 },
    ]);
  });

  test('given run time over two days by the hour, then the point of each job holds its percentiles', async () => {
    const answer = await get(`/api/metrics/series?task=mail.send&measure=runtime&from=${iso(T0 - 2 * DAY_MS)}&to=${iso(T0)}&step=1h`);
    const measured = answer.json.points.filter((point: { count: number }) => point.count > 0);
    expect(measured.map((point: { p50: number }) => point.p50)).toEqual([binValueMs(binOfMs(100)), binValueMs(binOfMs(200))]);
  });

  test('given a step that is not whole buckets of the tier, too many points, or depth without a queue, then 400 naming the field', async () => {
    const hourly = await get(`/api/metrics/series?from=${iso(T0 - 10 * DAY_MS)}&step=90m`);
    expect(hourly.status).toBe(400);
    expect(hourly.json.error.details.step[0]).toContain('hour');
    const tooMany = await get(`/api/metrics/series?from=${iso(T0 - 47 * HOUR_MS)}&step=1m`);
    expect(tooMany.json.error.details.step[0]).toContain('2500');
    const depth = await get('/api/metrics/series?measure=depth&task=mail.send');
    expect(depth.json.error.details).toHaveProperty('queue');
    expect((await get('/api/metrics/series?step=5x')).status).toBe(400);
  });

  test('given a queue, then its depth samples come from retention runs', async () => {
    await app.engine.commit({ t: 'retention', atMs: T0 - 2 * MINUTE_MS });
    const answer = await get(`/api/metrics/series?queue=default&measure=depth&from=${iso(T0 - 5 * MINUTE_MS)}&to=${iso(T0)}&step=1m`);
    expect(answer.status).toBe(200);
    expect(answer.json.points.map((point: { samples: number }) => point.samples)).toEqual([0, 0, 0, 1, 0]);
  });
});

describe('markers', () => {
  test('given a marker added with a session and one with the API key, then both are listed and drawn on the series in range', async () => {
    const bySession = await app.request('POST', '/api/markers', { headers: { cookie }, body: { connectionId: connection.id, name: 'deploy v42', at: iso(T0 - 40 * MINUTE_MS) } });
    expect(bySession.status).toBe(201);
    expect(bySession.json).toMatchObject({ connectionId: connection.id, name: 'deploy v42', at: iso(T0 - 40 * MINUTE_MS), addedBy: 'admin@example.com' });
    const byKey = await app.request('POST', '/api/markers', { headers: { authorization: `Bearer ${connection.apiKey}` }, body: { connectionId: connection.id, name: 'config change' } });
    expect(byKey.status).toBe(201);
    expect(byKey.json).toMatchObject({ at: iso(T0), addedBy: 'api key' });

    const listed = await get(`/api/markers?from=${iso(T0 - HOUR_MS)}&to=${iso(T0 + MINUTE_MS)}`);
    expect(listed.json.data.map((marker: { name: string }) => marker.name)).toEqual(['deploy v42', 'config change']);
    const series = await get(`/api/metrics/series?from=${iso(T0 - HOUR_MS)}&to=${iso(T0)}`);
    expect(series.json.markers.map((marker: { name: string }) => marker.name)).toEqual(['deploy v42']);
  });

  test('given an API key, then it may mark only its own connection, and a bad key is 401; a session of another team is not found', async () => {
    const other = await app.createConnection(cookie, 'staging');
    const wrongKey = await app.request('POST', '/api/markers', { headers: { authorization: `Bearer ${other.apiKey}` }, body: { connectionId: connection.id, name: 'x' } });
    expect(wrongKey.status).toBe(403);
    const badKey = await app.request('POST', '/api/markers', { headers: { authorization: 'Bearer sk_nothing' }, body: { connectionId: connection.id, name: 'x' } });
    expect(badKey.status).toBe(401);
    const stranger = await app.createUser(cookie, 'stranger@example.com');
    const notTheirs = await app.request('POST', '/api/markers', { headers: { cookie: stranger }, body: { connectionId: connection.id, name: 'x' } });
    expect(notTheirs.status).toBe(404);
    const created = await app.request('POST', '/api/markers', { headers: { cookie }, body: { connectionId: connection.id, name: 'deploy' } });
    expect((await app.request('DELETE', `/api/markers/${created.json.id}`, { headers: { cookie: stranger } })).status).toBe(404);
  });

  test("given members of the connection's team, then a viewer reads the markers but may not add or delete one (403 naming the role), an operator adds and deletes any, and each change is audited", async () => {
    const team = (await get('/api/teams')).json.data[0].id as string;
    const member = async (email: string, role: string) => {
      const signedIn = await app.createUser(cookie, email, 'another long password', { team: false });
      expect((await app.request('POST', `/api/teams/${team}/members`, { headers: { cookie }, body: { email, role } })).status).toBe(201);
      return signedIn;
    };
    const viewer = await member('viewer@example.com', 'viewer');
    const operator = await member('operator@example.com', 'operator');
    const byKey = await app.request('POST', '/api/markers', { headers: { authorization: `Bearer ${connection.apiKey}` }, body: { connectionId: connection.id, name: 'release 7' } });
    expect(byKey.status).toBe(201);

    const untilAfterNow = `/api/markers?to=${iso(T0 + MINUTE_MS)}`;
    expect((await get(untilAfterNow, viewer)).json.data.map((marker: { name: string }) => marker.name)).toEqual(['release 7']);
    expect((await get('/api/metrics/tasks', viewer)).json.data.length).toBe(2);
    const refused = await app.request('POST', '/api/markers', { headers: { cookie: viewer }, body: { connectionId: connection.id, name: 'deploy' } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.message).toBe("to add markers you need the operator role in team 'default'; yours is viewer");
    expect((await app.request('DELETE', `/api/markers/${byKey.json.id}`, { headers: { cookie: viewer } })).status).toBe(403);

    const added = await app.request('POST', '/api/markers', { headers: { cookie: operator }, body: { connectionId: connection.id, name: 'deploy v43' } });
    expect(added.status).toBe(201);
    expect(added.json.addedBy).toBe('operator@example.com');
    // any marker of the connection, the key's too
    expect((await app.request('DELETE', `/api/markers/${byKey.json.id}`, { headers: { cookie: operator } })).status).toBe(204);
    expect((await get(untilAfterNow)).json.data.map((marker: { name: string }) => marker.name)).toEqual(['deploy v43']);

    const audit = (await get(`/api/audit?teamId=${team}`)).json.data as Array<{ action: string; email: string; outcome: string; target: string; connectionId: string }>;
    // all at one moment of the test's clock: compared in no particular order
    const markerEntries = audit.filter((entry) => entry.action.startsWith('marker.')).map((entry) => [entry.action, entry.email, entry.outcome, entry.target, entry.connectionId]);
    expect(markerEntries.sort()).toEqual([
      ['marker.delete', 'operator@example.com', 'success', byKey.json.id, connection.id],
      ['marker.add', 'operator@example.com', 'success', added.json.id, connection.id],
      ['marker.delete', 'viewer@example.com', 'denied', byKey.json.id, connection.id],
      ['marker.add', 'viewer@example.com', 'denied', connection.id, connection.id],
      ['marker.add', 'api key', 'success', byKey.json.id, connection.id],
    ].sort());
  });

  test('given a marker out of range, nameless, or with a bad time, then 400 naming the field; without any credentials 401', async () => {
    const post = (body: Record<string, unknown>) => app.request('POST', '/api/markers', { headers: { cookie }, body: { connectionId: connection.id, name: 'deploy', ...body } });
    expect((await post({ at: iso(T0 + DAY_MS) })).json.error.details).toHaveProperty('at');
    expect((await post({ at: iso(T0 - 800 * DAY_MS) })).json.error.details).toHaveProperty('at');
    expect((await post({ at: 'soon' })).json.error.details).toHaveProperty('at');
    expect((await post({ name: '   ' })).json.error.details).toHaveProperty('name');
    expect((await post({ name: 'x'.repeat(201) })).status).toBe(400);
    expect((await app.request('POST', '/api/markers', { body: { connectionId: connection.id, name: 'deploy' } })).status).toBe(401);
  });
});
