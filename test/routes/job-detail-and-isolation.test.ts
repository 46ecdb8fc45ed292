import { describe, expect, test } from 'bun:test';
import { testApp, T0 } from '../support/test-app.ts';
import { iso, jobEvent } from '../support/events.ts';

describe('GET /api/jobs/:id', () => {
  test('the detail shape: history collapsed, previous state, lifted extension keys, relations as jobwatch ids, V0 nulls', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    const extensions = { eta: '2026-11-21T12:00:00Z', parentId: 'p-1', rootId: 'r-1', tags: { team: 'billing' }, custom: [1, 2] };
    await t.ingest(c.apiKey, [
      jobEvent(c.id, T0 + 3000, { state: 'failed', error: 'boom', stacktrace: 'Traceback...', attempt: 2, maxRetries: 3, completedAt: iso(T0 + 3000), startedAt: iso(T0 + 1500) }),
      jobEvent(c.id, T0, { state: 'queued', extensions }),
      jobEvent(c.id, T0 + 1000, { state: 'active' }),
      jobEvent(c.id, T0 + 1200, { state: 'active', progress: 0.5 }),
    ]);
    const listed = await t.request('GET', '/api/jobs', { headers: { cookie } });
    const id = listed.json.data[0].id;
    const detail = await t.request('GET', `/api/jobs/${id}`, { headers: { cookie } });
    expect(detail.status).toBe(200);
    expect(detail.json).toMatchObject({
      id,
      externalId: 'task-1',
      state: 'failed',
      previousState: 'active',
      stateChangedAt: iso(T0 + 3000),
      scheduledFor: '2026-11-21T12:00:00.000Z',
      // the job system's ids in extensions name a parent and root, read as jobwatch ids: none of them has arrived
      parentId: null,
      rootId: null,
      tags: { team: 'billing' },
      attempt: 2,
      maxRetries: 3,
      progress: 0.5,
      args: null,
      result: null,
      error: 'boom',
      stacktrace: 'Traceback...',
      durationMs: 1500,
      createdAt: iso(T0),
    });
    expect(detail.json.extensions).toEqual(extensions);
    expect(detail.json.stateHistory).toEqual([
      { state: 'queued', timestamp: iso(T0) },
      { state: 'active', timestamp: iso(T0 + 1000) },
      { state: 'failed', timestamp: iso(T0 + 3000) },
    ]);
  });

  test('recentExecutions: up to 10 other jobs of the same name, newest createdAt first', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const c = await t.createConnection(cookie, 'prod');
    const events = Array.from({ length: 14 }, (_, i) => jobEvent(c.id, T0 + ((i * 5) % 14) * 1000, { externalId: `same-${i}`, name: 'tasks.same' }));
    events.push(jobEvent(c.id, T0 + 99_000, { externalId: 'other', name: 'tasks.other' }));
    await t.ingest(c.apiKey, events);
    const target = t.engine.connection(c.id)!.jobs.getByExternalId('same-0')!;
    const detail = await t.request('GET', `/api/jobs/${target.id}`, { headers: { cookie } });
    const recent = detail.json.recentExecutions;
    expect(recent).toHaveLength(10);
    expect(recent.map((item: any) => item.externalId)).not.toContain('same-0');
    expect(recent.map((item: any) => item.externalId)).not.toContain('other');
    const created = recent.map((item: any) => Date.parse(item.createdAt));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(created[0]).toBe(T0 + 13_000);
    expect(Object.keys(recent[0]).sort()).toEqual(['completedAt', 'createdAt', 'durationMs', 'error', 'externalId', 'id', 'startedAt', 'state'].sort());
  });

  test('an unknown id is 404 job not found', async () => {
    const t = await testApp();
    const cookie = await t.login();
    const response = await t.request('GET', '/api/jobs/0190a000-0000-7000-8000-000000000000', { headers: { cookie } });
    expect(response.status).toBe(404);
    expect(response.json.error).toMatchObject({ code: 'NOT_FOUND', message: 'job not found' });
  });
});

describe('tenant isolation: two users, three connections', () => {
  test('each user sees only their connections; a foreign connectionId gives an empty page; foreign ids are 404', async () => {
    const t = await testApp();
    const alice = await t.login();
    const bob = await t.createUser(alice, 'bob@example.com');
    const a1 = await t.createConnection(alice, 'a1');
    const a2 = await t.createConnection(alice, 'a2');
    const b1 = await t.createConnection(bob, 'b1');
    await t.ingest(a1.apiKey, [jobEvent(a1.id, T0, { externalId: 'a1-job', name: 'n1' }), jobEvent(a1.id, T0 + 2000, { externalId: 'a1-job2', name: 'n3' })]);
    await t.ingest(a2.apiKey, [jobEvent(a2.id, T0 + 1000, { externalId: 'a2-job', name: 'n2' })]);
    await t.ingest(b1.apiKey, [jobEvent(b1.id, T0 + 500, { externalId: 'b1-job', name: 'n0' })]);

    const aliceAll = await t.request('GET', '/api/jobs?sortBy=createdAt&sortOrder=asc', { headers: { cookie: alice } });
    expect(aliceAll.json.data.map((job: any) => job.externalId)).toEqual(['a1-job', 'a2-job', 'a1-job2']);
    expect(aliceAll.json.pagination.total).toBe(3);
    const byName = await t.request('GET', '/api/jobs?sortBy=name&sortOrder=desc&limit=2', { headers: { cookie: alice } });
    expect(byName.json.data.map((job: any) => job.name)).toEqual(['n3', 'n2']);
    const next = await t.request('GET', `/api/jobs?sortBy=name&sortOrder=desc&limit=2&cursor=${byName.json.pagination.nextCursor}`, { headers: { cookie: alice } });
    expect(next.json.data.map((job: any) => job.name)).toEqual(['n1']);

    const narrowed = await t.request('GET', `/api/jobs?connectionId=${a2.id}`, { headers: { cookie: alice } });
    expect(narrowed.json.data.map((job: any) => job.externalId)).toEqual(['a2-job']);
    const foreign = await t.request('GET', `/api/jobs?connectionId=${b1.id}`, { headers: { cookie: alice } });
    expect(foreign.json).toEqual({ data: [], pagination: { nextCursor: null, limit: 50, total: 0 } });

    const bobJob = (await t.request('GET', '/api/jobs', { headers: { cookie: bob } })).json.data;
    expect(bobJob.map((job: any) => job.externalId)).toEqual(['b1-job']);
    expect((await t.request('GET', `/api/jobs/${bobJob[0].id}`, { headers: { cookie: alice } })).status).toBe(404);
    expect((await t.request('GET', `/api/queues?connectionId=${b1.id}`, { headers: { cookie: alice } })).json.data).toEqual([]);
    expect((await t.request('GET', '/api/workers', { headers: { cookie: bob } })).json.data).toEqual([]);
  });

  test('reads need a session', async () => {
    const t = await testApp();
    for (const path of ['/api/jobs', '/api/jobs/x', '/api/queues', '/api/workers']) {
      const response = await t.request('GET', path);
      expect(response.status).toBe(401);
      expect(response.json.error.message).toBe('authentication required');
    }
  });
});
