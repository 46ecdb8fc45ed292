/**
 * One tenant must not grow the service without bound (at a reduced scale): a tenant invents
 * queue names and workers that
 * list hundreds of queues, dated far ahead so they never expire. The bounds must hold:
 * events past them are refused one by one with a code, the counts never pass the bound,
 * retention frees the names, and the queue list stays correct.
 */
import { describe, expect, test } from 'bun:test';
import { T0, testApp } from '../support/test-app.ts';
import { jobEvent, queueEvent, workerEvent } from '../support/events.ts';

const QUEUES_MAX = 20;
const WORKERS_MAX = 5;
const DAY_MS = 86_400_000;

async function setup() {
  const t = await testApp({ limits: { dailyEventLimit: 0, queuesPerConnectionMax: QUEUES_MAX, workersPerConnectionMax: WORKERS_MAX } });
  const cookie = await t.login();
  const c = await t.createConnection(cookie, 'attacked');
  const actor = t.engine.connection(c.id)!;
  return { t, cookie, c, actor };
}

const names = (count: number, prefix = 'q') => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe('queues and workers per connection are bounded', () => {
  test('queue names past the bound are refused per event with QUEUE_LIMIT_EXCEEDED, from snapshots and from jobs', async () => {
    const { t, c, actor } = await setup();
    const snapshots = names(QUEUES_MAX + 10).map((name) => queueEvent(c.id, T0, { name }));
    const response = await t.ingest(c.apiKey, snapshots);
    expect(response.json).toMatchObject({ accepted: QUEUES_MAX, rejected: 10 });
    expect(response.json.errors.map((error: { index: number }) => error.index)).toEqual(names(10).map((_, i) => QUEUES_MAX + i));
    expect(response.json.errors[0]).toMatchObject({ code: 'QUEUE_LIMIT_EXCEEDED', message: expect.stringContaining('QUEUES_PER_CONNECTION_MAX') });
    expect(actor.queues.size).toBe(QUEUES_MAX);

    // A job naming a new queue is refused too; one naming a known queue still goes in.
    const jobs = await t.ingest(c.apiKey, [jobEvent(c.id, T0, { externalId: 'a', queue: 'brand-new' }), jobEvent(c.id, T0, { externalId: 'b', queue: 'q-0' })]);
    expect(jobs.json).toMatchObject({ accepted: 1, rejected: 1, errors: [{ index: 0, code: 'QUEUE_LIMIT_EXCEEDED' }] });
    expect(actor.queues.size).toBe(QUEUES_MAX);
    expect(actor.jobs.getByExternalId('a')).toBeUndefined();
  });

  test('workers past the bound are refused with WORKER_LIMIT_EXCEEDED; known workers keep reporting', async () => {
    const { t, c, actor } = await setup();
    const workers = names(WORKERS_MAX + 3, 'w').map((externalId) => workerEvent(c.id, T0, { externalId, queues: names(256) }));
    const response = await t.ingest(c.apiKey, workers);
    expect(response.json).toMatchObject({ accepted: WORKERS_MAX, rejected: 3 });
    expect(response.json.errors[0]).toMatchObject({ index: WORKERS_MAX, code: 'WORKER_LIMIT_EXCEEDED' });
    expect(actor.workers.size).toBe(WORKERS_MAX);
    const again = await t.ingest(c.apiKey, [workerEvent(c.id, T0 + 1000, { externalId: 'w-0', state: 'heartbeat' })]);
    expect(again.json).toMatchObject({ accepted: 1, rejected: 0 });
  });

  test('the attack: invented queues, workers listing 256 queues dated in 9999; bounds hold and the list stays right', async () => {
    const { t, cookie, c, actor } = await setup();
    await t.ingest(c.apiKey, names(QUEUES_MAX * 3).map((name) => queueEvent(c.id, T0 - 1000, { name, depth: 1 })));
    const farFuture = names(WORKERS_MAX * 2, 'w').map((externalId) => ({ ...workerEvent(c.id, T0, { externalId, queues: names(256) }), timestamp: '9999-12-31T23:59:59Z' }));
    const refused = await t.ingest(c.apiKey, farFuture);
    expect(refused.json).toMatchObject({ accepted: 0, rejected: WORKERS_MAX * 2 });
    expect(refused.json.errors[0].details.timestamp).toBeDefined();
    const present = await t.ingest(c.apiKey, names(WORKERS_MAX * 2, 'w').map((externalId) => workerEvent(c.id, T0, { externalId, queues: names(256) })));
    expect(present.json).toMatchObject({ accepted: WORKERS_MAX, rejected: WORKERS_MAX });
    expect(actor.queues.size).toBe(QUEUES_MAX);
    expect(actor.workers.size).toBe(WORKERS_MAX);

    // Queues without a snapshot's consumers count the live workers listing them (every
    // accepted worker lists all).
    const list = await t.request('GET', `/api/queues?limit=100&sortBy=consumers&sortOrder=desc`, { headers: { cookie } });
    expect(list.json.pagination.total).toBe(QUEUES_MAX);
    expect(list.json.data.map((queue: { consumers: number }) => queue.consumers)).toEqual(Array(QUEUES_MAX).fill(WORKERS_MAX));
    // Workers past the heartbeat timeout are not consumers.
    t.clock.advance(10_000);
    const later = await t.request('GET', `/api/queues?limit=1`, { headers: { cookie } });
    expect(later.json.data[0].consumers).toBe(0);

    // Retention removes the silent workers and queues; the names are free again.
    t.clock.set(T0 + DAY_MS + 60_000);
    await t.engine.commit({ t: 'retention', atMs: t.clock.nowMs() });
    expect(actor.workers.size).toBe(0);
    expect(actor.queues.size).toBe(0);
    expect(actor.workers.listing('q-3').size).toBe(0);
    const fresh = await t.ingest(c.apiKey, [queueEvent(c.id, t.clock.nowMs(), { name: 'after-retention' })]);
    expect(fresh.json).toMatchObject({ accepted: 1, rejected: 0 });
  });

  test('a queue any job event named recently outlives retention; an idle one does not', async () => {
    const { t, c, actor } = await setup();
    await t.ingest(c.apiKey, [queueEvent(c.id, T0 - DAY_MS / 2, { name: 'idle' }), queueEvent(c.id, T0 - DAY_MS / 2, { name: 'busy' })]);
    await t.ingest(c.apiKey, [jobEvent(c.id, T0, { externalId: 'x', queue: 'busy', state: 'active' })]);
    await t.engine.commit({ t: 'retention', atMs: T0 + DAY_MS / 2 + 1 });
    expect([...actor.queues.values()].map((queue) => queue.name)).toEqual(['busy']);
  });
});
