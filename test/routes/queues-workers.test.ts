import { describe, expect, test } from 'bun:test';
import { testApp, T0 } from '../support/test-app.ts';
import { iso, jobEvent, queueEvent, workerEvent } from '../support/events.ts';

const at = (hhmm: string) => Date.parse(`2026-11-21T${hhmm}:00.000Z`);

async function setup() {
  const t = await testApp({ limits: { dailyEventLimit: 0 } });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'prod');
  return { t, cookie, c };
}

describe('GET /api/queues metrics', () => {
  test('throughput, failureRate, avgLatencyMs and the health bar over 1h and 6h, from hand-computed values', async () => {
    const { t, cookie, c } = await setup(); // now = 10:00 UTC
    await t.ingest(c.apiKey, [
      jobEvent(c.id, at('09:30'), { externalId: 'A', queue: 'mail', state: 'active', createdAt: iso(at('09:29')), startedAt: iso(at('09:30')) }),
      jobEvent(c.id, at('09:31'), { externalId: 'A', queue: 'mail', state: 'completed', completedAt: iso(at('09:31')) }),
      jobEvent(c.id, at('09:44'), { externalId: 'B', queue: 'mail', state: 'active', createdAt: iso(at('09:40')), startedAt: iso(at('09:44')) }),
      jobEvent(c.id, at('09:45'), { externalId: 'B', queue: 'mail', state: 'failed', completedAt: iso(at('09:45')) }),
      jobEvent(c.id, at('05:00'), { externalId: 'C', queue: 'mail', state: 'completed', completedAt: iso(at('05:00')) }),
    ]);
    const hour = (await t.request('GET', '/api/queues?timeRange=1h', { headers: { cookie } })).json.data[0];
    expect(hour.throughput).toBeCloseTo(2 / 3600, 12);
    expect(hour.failureRate).toBe(0.5);
    expect(hour.avgLatencyMs).toBe((60_000 + 240_000) / 2);
    expect(hour.healthBar.timeRange).toBe('1h');
    expect(hour.healthBar.buckets).toHaveLength(60);
    expect(hour.healthBar.buckets[0].start).toBe(iso(at('09:01')));
    expect(hour.healthBar.buckets[59]).toEqual({ start: iso(at('10:00')), end: iso(at('10:01')), succeeded: 0, failed: 0 });
    expect(hour.healthBar.buckets[30]).toEqual({ start: iso(at('09:31')), end: iso(at('09:32')), succeeded: 1, failed: 0 });
    expect(hour.healthBar.buckets[44]).toMatchObject({ succeeded: 0, failed: 1 });

    const six = (await t.request('GET', '/api/queues?timeRange=6h', { headers: { cookie } })).json.data[0];
    expect(six.healthBar.buckets).toHaveLength(72);
    expect(six.failureRate).toBeCloseTo(1 / 3, 12);
    expect(six.throughput).toBeCloseTo(3 / 21_600, 12);
    const day = (await t.request('GET', '/api/queues', { headers: { cookie } })).json.data[0];
    expect(day.healthBar.timeRange).toBe('24h');
    expect(day.healthBar.buckets).toHaveLength(96);
    expect((await t.request('GET', '/api/queues?timeRange=7d', { headers: { cookie } })).json.data[0].healthBar.buckets).toHaveLength(168);
  });

  test('a queue with nothing to measure has null metrics; depth and consumers fall back to jobs and workers', async () => {
    const { t, cookie, c } = await setup();
    await t.ingest(c.apiKey, [
      jobEvent(c.id, T0 - 1000, { externalId: 'q1', queue: 'idle', state: 'queued' }),
      jobEvent(c.id, T0 - 1000, { externalId: 'q2', queue: 'idle', state: 'queued' }),
      workerEvent(c.id, T0 - 1000, { externalId: 'w1', queues: ['idle'] }),
      workerEvent(c.id, T0 - 60_000, { externalId: 'w-gone', queues: ['idle'] }),
    ]);
    const [queue] = (await t.request('GET', '/api/queues', { headers: { cookie } })).json.data;
    expect(queue).toMatchObject({ name: 'idle', depth: 2, consumers: 1, throughput: null, failureRate: null, avgLatencyMs: null, framework: 'celery', connectionId: c.id, extensions: {} });
    await t.ingest(c.apiKey, [queueEvent(c.id, T0, { name: 'idle', depth: 40, consumers: 7 })]);
    const [snapshotted] = (await t.request('GET', '/api/queues', { headers: { cookie } })).json.data;
    expect(snapshotted).toMatchObject({ depth: 40, consumers: 7 });
    await t.ingest(c.apiKey, [queueEvent(c.id, T0 - 5000, { name: 'idle', depth: 1, consumers: 1 })]);
    expect((await t.request('GET', '/api/queues', { headers: { cookie } })).json.data[0]).toMatchObject({ depth: 40 });
  });

  test('sorting, paging and validation', async () => {
    const { t, cookie, c } = await setup();
    await t.ingest(c.apiKey, ['b', 'a', 'c'].map((name, i) => queueEvent(c.id, T0, { name, depth: i })));
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 - 1000, { queue: 'a', state: 'completed' })]);
    const byName = await t.request('GET', '/api/queues?limit=2', { headers: { cookie } });
    expect(byName.json.data.map((q: any) => q.name)).toEqual(['a', 'b']);
    expect(byName.json.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
    const page2 = await t.request('GET', '/api/queues?limit=2&page=2', { headers: { cookie } });
    expect(page2.json.data.map((q: any) => q.name)).toEqual(['c']);
    const byDepth = await t.request('GET', '/api/queues?sortBy=depth&sortOrder=desc', { headers: { cookie } });
    expect(byDepth.json.data.map((q: any) => q.name)).toEqual(['c', 'a', 'b']);
    for (const order of ['asc', 'desc']) {
      const byThroughput = await t.request('GET', `/api/queues?sortBy=throughput&sortOrder=${order}`, { headers: { cookie } });
      expect(byThroughput.json.data[0].name).toBe('a'); // the only one with a value; nulls last both ways
    }
    for (const [param, field] of [['timeRange=2h', 'timeRange'], ['limit=0', 'limit'], ['limit=101', 'limit'], ['page=0', 'page'], ['sortBy=bogus', 'sortBy']]) {
      const response = await t.request('GET', `/api/queues?${param}`, { headers: { cookie } });
      expect(response.status).toBe(400);
      expect(Object.keys(response.json.error.details)).toEqual([field!]);
    }
  });
});

describe('GET /api/workers', () => {
  test('a worker silent for more than 6 s is offline on read; a heartbeat brings it back without touching busy/idle', async () => {
    const { t, cookie, c } = await setup();
    await t.ingest(c.apiKey, [workerEvent(c.id, T0, { externalId: 'w1', state: 'busy' })]);
    const read = async () => (await t.request('GET', '/api/workers', { headers: { cookie } })).json.data[0];
    t.clock.set(T0 + 6000);
    expect((await read()).state).toBe('busy');
    t.clock.set(T0 + 6001);
    expect((await read()).state).toBe('offline');
    await t.ingest(c.apiKey, [workerEvent(c.id, T0 + 6001, { externalId: 'w1', state: 'heartbeat' })]);
    expect(await read()).toMatchObject({ state: 'busy', lastHeartbeat: iso(T0 + 6001) });
    await t.ingest(c.apiKey, [workerEvent(c.id, T0 + 6002, { externalId: 'w1', state: 'offline' })]);
    expect((await read()).state).toBe('offline');
    await t.ingest(c.apiKey, [workerEvent(c.id, T0 + 6003, { externalId: 'w1', state: 'heartbeat' })]);
    expect((await read()).state).toBe('online');
  });

  test('taskRate counts jobs finished in the last 60 minutes / 60; processedTotal restarts at online; activeJobs falls back to active jobs', async () => {
    const { t, cookie, c } = await setup();
    await t.ingest(c.apiKey, [workerEvent(c.id, T0 - 7200_000, { externalId: 'w1', state: 'online' })]);
    const finish = (id: string, minutesAgo: number, state = 'completed') => [
      jobEvent(c.id, T0 - minutesAgo * 60_000 - 1, { externalId: id, state: 'active', workerId: 'w1' }),
      jobEvent(c.id, T0 - minutesAgo * 60_000, { externalId: id, state, workerId: 'w1' }),
    ];
    await t.ingest(c.apiKey, [...finish('old', 90), ...finish('a', 50), ...finish('b', 10, 'failed'), ...finish('c', 1)]);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0 - 1000, { externalId: 'running', state: 'active', workerId: 'w1' }), workerEvent(c.id, T0 - 500, { externalId: 'w1', state: 'busy' })]);
    const [worker] = (await t.request('GET', '/api/workers', { headers: { cookie } })).json.data;
    expect(worker.taskRate).toBeCloseTo(3 / 60, 12);
    expect(worker.processedTotal).toBe(4);
    expect(worker.activeJobs).toBe(1);
    await t.ingest(c.apiKey, [workerEvent(c.id, T0, { externalId: 'w1', state: 'online', activeJobs: 5 })]);
    const [restarted] = (await t.request('GET', '/api/workers', { headers: { cookie } })).json.data;
    expect(restarted.processedTotal).toBe(0);
    expect(restarted.activeJobs).toBe(5);
  });

  test('filters by state and framework, sorts with nulls last, pages, validates', async () => {
    const { t, cookie, c } = await setup();
    await t.ingest(c.apiKey, [
      workerEvent(c.id, T0, { externalId: 'w1', hostname: 'beta', state: 'idle' }),
      workerEvent(c.id, T0 - 1, { externalId: 'w2', hostname: 'alpha', state: 'busy', activeJobs: 3 }),
      { ...workerEvent(c.id, T0 - 10_000, { externalId: 'w3', hostname: 'gamma', state: 'online' }), framework: 'sidekiq' },
    ]);
    const names = async (query: string) => (await t.request('GET', `/api/workers?${query}`, { headers: { cookie } })).json.data.map((w: any) => w.hostname);
    expect(await names('')).toEqual(['alpha', 'beta', 'gamma']);
    expect(await names('state=offline')).toEqual(['gamma']);
    expect(await names('state=idle')).toEqual(['beta']);
    expect(await names('framework=sidekiq')).toEqual(['gamma']);
    expect((await names('sortBy=activeJobs&sortOrder=desc'))[0]).toBe('alpha');
    expect(await names('sortBy=lastHeartbeat&sortOrder=asc')).toEqual(['gamma', 'alpha', 'beta']);
    expect(await names('limit=1&page=3')).toEqual(['gamma']);
    for (const param of ['state=heartbeat', 'sortBy=pid', 'limit=101']) {
      expect((await t.request('GET', `/api/workers?${param}`, { headers: { cookie } })).status).toBe(400);
    }
  });
});
