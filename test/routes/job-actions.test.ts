import { describe, expect, test } from 'bun:test';
import { testApp, T0 } from '../support/test-app.ts';
import { jobEvent } from '../support/events.ts';

/** One connection with a job in each named state; returns ids by externalId. */
async function withJobs(states: string[]) {
  const t = await testApp();
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  await t.ingest(c.apiKey, states.map((state, i) => jobEvent(c.id, T0 - 60_000, { externalId: `${state}-${i}`, state, attempt: 2, queue: 'mail' })));
  const actor = t.engine.connection(c.id)!;
  const id = (externalId: string) => actor.jobs.getByExternalId(externalId)!.id;
  return { t, cookie, c, actor, id };
}

describe('POST /api/jobs/bulk/revoke', () => {
  test('active and queued jobs are cancelled; others fail with the exact text; unknown ids are not found; each is independent', async () => {
    const { t, cookie, id } = await withJobs(['active', 'queued', 'completed', 'failed']);
    const ids = [id('active-0'), id('queued-1'), id('completed-2'), 'no-such-job', id('failed-3')];
    const response = await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids }, headers: { cookie } });
    expect(response.status).toBe(200);
    expect(response.json.results).toEqual([
      { id: ids[0], success: true, state: 'cancelled' },
      { id: ids[1], success: true, state: 'cancelled' },
      { id: ids[2], success: false, error: "job cannot be revoked from state 'completed'" },
      { id: 'no-such-job', success: false, error: 'job not found' },
      { id: ids[4], success: false, error: "job cannot be revoked from state 'failed'" },
    ]);
    const detail = await t.request('GET', `/api/jobs/${ids[0]}`, { headers: { cookie } });
    expect(detail.json.state).toBe('cancelled');
    expect(detail.json.previousState).toBe('active');
    expect(detail.json.stateHistory.map((entry: any) => entry.state)).toEqual(['active', 'cancelled']);
  });

  test('a repeated id sees its own earlier effect', async () => {
    const { t, cookie, id } = await withJobs(['active']);
    const response = await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: [id('active-0'), id('active-0')] }, headers: { cookie } });
    expect(response.json.results.map((r: any) => r.success)).toEqual([true, false]);
    expect(response.json.results[1].error).toBe("job cannot be revoked from state 'cancelled'");
  });

  test('1 to 100 ids; 0 or 101 is a 400 naming ids', async () => {
    const { t, cookie } = await withJobs([]);
    for (const ids of [[], Array.from({ length: 101 }, (_, i) => `id-${i}`)]) {
      const response = await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids }, headers: { cookie } });
      expect(response.status).toBe(400);
      expect(Object.keys(response.json.error.details)).toEqual(['ids']);
    }
    const hundred = await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: Array.from({ length: 100 }, (_, i) => `id-${i}`) }, headers: { cookie } });
    expect(hundred.status).toBe(200);
    expect(hundred.json.results).toHaveLength(100);
  });

  test('another user\'s job is not found; actions need a session and the own origin', async () => {
    const { t, cookie, id } = await withJobs(['active']);
    const bob = await t.createUser(cookie, 'bob@example.com');
    const response = await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: [id('active-0')] }, headers: { cookie: bob } });
    expect(response.json.results).toEqual([{ id: id('active-0'), success: false, error: 'job not found' }]);
    expect((await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: ['x'] } })).status).toBe(401);
    expect((await t.request('POST', '/api/jobs/bulk/revoke', { body: { ids: ['x'] }, headers: { cookie, origin: 'https://evil.example' } })).status).toBe(403);
  });
});

describe('single revoke and retry', () => {
  test('revoke: 200 with the new state, 409 INVALID_STATE with the text, 404 for unknown', async () => {
    const { t, cookie, id } = await withJobs(['queued', 'completed']);
    const ok = await t.request('POST', `/api/jobs/${id('queued-0')}/revoke`, { headers: { cookie } });
    expect(ok.status).toBe(200);
    expect(ok.json).toEqual({ id: id('queued-0'), success: true, state: 'cancelled' });
    const wrong = await t.request('POST', `/api/jobs/${id('completed-1')}/revoke`, { headers: { cookie } });
    expect(wrong.status).toBe(409);
    expect(wrong.json.error).toMatchObject({ code: 'INVALID_STATE', message: "job cannot be revoked from state 'completed'" });
    const missing = await t.request('POST', '/api/jobs/nope/revoke', { headers: { cookie } });
    expect(missing.status).toBe(404);
    expect(missing.json.error.message).toBe('job not found');
  });

  test('retry: from failed and cancelled to retrying, attempt kept until the job system reports the new run', async () => {
    const { t, cookie, c, id, actor } = await withJobs(['failed', 'cancelled', 'completed']);
    const retried = await t.request('POST', `/api/jobs/${id('failed-0')}/retry`, { headers: { cookie } });
    expect(retried.json).toEqual({ id: id('failed-0'), success: true, state: 'retrying' });
    expect((await t.request('GET', `/api/jobs/${id('failed-0')}`, { headers: { cookie } })).json).toMatchObject({ state: 'retrying', attempt: 2 });
    const bulk = await t.request('POST', '/api/jobs/bulk/retry', { body: { ids: [id('cancelled-1'), id('completed-2')] }, headers: { cookie } });
    expect(bulk.json.results).toEqual([
      { id: id('cancelled-1'), success: true, state: 'retrying' },
      { id: id('completed-2'), success: false, error: "job cannot be retried from state 'completed'" },
    ]);
    const wrong = await t.request('POST', `/api/jobs/${id('completed-2')}/retry`, { headers: { cookie } });
    expect(wrong.status).toBe(409);
    expect(wrong.json.error.message).toBe("job cannot be retried from state 'completed'");
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 1000, { externalId: 'failed-0', state: 'active', attempt: 3, queue: 'mail' })]);
    expect(actor.jobs.get(id('failed-0'))).toMatchObject({ state: 'active', attempt: 3 });
  });

  test('a late event older than the action does not undo it', async () => {
    const { t, c, cookie, id, actor } = await withJobs(['active']);
    await t.request('POST', `/api/jobs/${id('active-0')}/revoke`, { headers: { cookie } });
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 - 30_000, { externalId: 'active-0', state: 'completed', queue: 'mail' })]);
    expect(actor.jobs.get(id('active-0'))!.state).toBe('cancelled');
  });
});

describe('agent commands', () => {
  test('every action is queued as a command; the agent lists them in order and acks them', async () => {
    const { t, cookie, c, id } = await withJobs(['active', 'failed']);
    await t.request('POST', `/api/jobs/${id('active-0')}/revoke`, { headers: { cookie } });
    t.clock.advance(1000);
    await t.request('POST', `/api/jobs/${id('failed-1')}/retry`, { headers: { cookie } });
    const agent = { authorization: `Bearer ${c.apiKey}` };
    const listed = await t.request('GET', '/api/agent/commands', { headers: agent });
    expect(listed.status).toBe(200);
    expect(listed.json.data).toEqual([
      { id: expect.any(String), type: 'revoke', jobId: id('active-0'), externalId: 'active-0', name: 'tasks.add', queue: 'mail', createdAt: new Date(T0).toISOString() },
      { id: expect.any(String), type: 'retry', jobId: id('failed-1'), externalId: 'failed-1', name: 'tasks.add', queue: 'mail', createdAt: new Date(T0 + 1000).toISOString() },
    ]);
    expect((await t.request('GET', '/api/agent/commands?limit=1', { headers: agent })).json.data).toHaveLength(1);
    const first = listed.json.data[0].id;
    const acked = await t.request('POST', '/api/agent/commands/ack', { body: { ids: [first, first, 'unknown'] }, headers: agent });
    expect(acked.json).toEqual({ acked: 1 });
    expect((await t.request('GET', '/api/agent/commands', { headers: agent })).json.data.map((command: any) => command.type)).toEqual(['retry']);
  });

  test('the agent endpoints need the API key, not a session', async () => {
    const { t, cookie } = await withJobs([]);
    expect((await t.request('GET', '/api/agent/commands', { headers: { cookie } })).status).toBe(401);
    const ack = await t.request('POST', '/api/agent/commands/ack', { body: { ids: [] }, headers: { authorization: 'Bearer sk_nope' } });
    expect(ack.status).toBe(401);
    expect(ack.json.error.message).toBe('invalid or missing API key');
  });

  test('ack validates ids (1..1000)', async () => {
    const { t, c } = await withJobs([]);
    const response = await t.request('POST', '/api/agent/commands/ack', { body: { ids: [] }, headers: { authorization: `Bearer ${c.apiKey}` } });
    expect(response.status).toBe(400);
    expect(Object.keys(response.json.error.details)).toEqual(['ids']);
  });

  test('retention removes old jobs and commands, deterministically from the record time', async () => {
    const { t, cookie, c, id, actor } = await withJobs(['active', 'queued']);
    await t.request('POST', `/api/jobs/${id('active-0')}/revoke`, { headers: { cookie } });
    t.clock.set(T0 + 86_400_000 - 1000);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 + 86_400_000 - 1000, { externalId: 'queued-1', state: 'active', queue: 'mail' })]);
    await t.engine.commit({ t: 'retention', atMs: T0 + 86_400_000 + 1 });
    expect(actor.jobs.getByExternalId('active-0')).toBeUndefined();
    expect(actor.jobs.getByExternalId('queued-1')).toBeDefined();
    expect(actor.commands.size).toBe(0);
    expect([...actor.jobs.indexes.name.scan('asc')]).toHaveLength(1);
  });
});
