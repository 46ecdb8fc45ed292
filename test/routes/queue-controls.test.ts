/**
 * The controls of queues, workers and tasks through the routes: 202 with the command, the
 * command as the agent receives it (target and params), the outcome on the target, by id
 * and on the live stream; a queue's paused state from its snapshots and from a pause or
 * resume carried out; what a control cannot do, disabled with the agent's reason; the
 * checks of params, targets and the bound of pending commands; and all of it the same
 * after replaying the log and restoring a snapshot.
 */
import { describe, expect, test } from 'bun:test';
import { CONTROL_COMMANDS_PENDING_MAX } from '../../actors/connection/connection-actor.ts';
import { queueEvent } from '../support/events.ts';
import { replayedAndRestored } from '../support/recording-log.ts';
import { SseMessageReader } from '../support/sse-message-reader.ts';
import { BASE, T0 } from '../support/test-app.ts';
import { toQueueStreamItem } from '../../actors/views/queue-view.ts';
import { toWorkerView } from '../../actors/views/worker-view.ts';
import { BULLMQ_CONTROLS, controlFixture } from './control-fixture.ts';

const iso = (ms: number) => new Date(ms).toISOString();

describe('queue controls', () => {
  test('pause: 202; the agent gets the queue by name; done, the queue is paused everywhere it is shown', async () => {
    const f = await controlFixture();
    const queueId = f.queueId();
    expect((await f.get(`/api/queues/${queueId}`)).json).toMatchObject({ name: 'emails', paused: false, commands: [] });
    const accepted = await f.post(`/api/queues/${queueId}/pause`);
    expect(accepted.status).toBe(202);
    expect((await f.get(`/api/commands/${accepted.json.commandId}`)).json).toMatchObject({ type: 'queue.pause', target: { kind: 'queue', queue: 'emails' }, params: null, status: 'pending' });
    expect(await f.commands()).toEqual([{ id: accepted.json.commandId, type: 'queue.pause', queue: 'emails', createdAt: iso(T0) }]);
    f.t.clock.advance(800);
    await f.ack([{ id: accepted.json.commandId, status: 'done' }]);
    const queue = (await f.get(`/api/queues/${queueId}`)).json;
    expect(queue).toMatchObject({ paused: true, commands: [{ id: accepted.json.commandId, status: 'done', completedAt: iso(T0 + 800) }] });
    expect(queue.controls['queue.pause']).toEqual({ available: false, reason: 'the queue is paused' });
    expect((await f.get('/api/queues?paused=true')).json.data.map((each: { name: string }) => each.name)).toEqual(['emails']);
    expect((await f.get('/api/queues?paused=false')).json.data).toEqual([]);
    expect((await f.get('/api/queues?paused=maybe')).status).toBe(400);
  });

  test("the queue's paused state follows the job system: a newer snapshot says otherwise, an older one does not", async () => {
    const f = await controlFixture();
    const { json } = await f.post(`/api/queues/${f.queueId()}/pause`);
    f.t.clock.advance(1_000);
    await f.ack([{ id: json.commandId, status: 'done' }]);
    // a snapshot read before the pause, delivered after its outcome
    await f.ingest([{ ...queueEvent(f.c.id, T0 + 500, { name: 'emails', depth: 1, extensions: { paused: false } }), framework: 'bullmq' }]);
    expect((await f.get(`/api/queues/${f.queueId()}`)).json.paused).toBe(true);
    // resumed from elsewhere (bull-board, the app): the next snapshot says so
    await f.ingest([{ ...queueEvent(f.c.id, T0 + 3_000, { name: 'emails', depth: 1, extensions: { paused: false } }), framework: 'bullmq' }]);
    expect((await f.get(`/api/queues/${f.queueId()}`)).json.paused).toBe(false);
  });

  test('a refused or unsupported pause leaves the paused state as it was, with the reason on the queue', async () => {
    const f = await controlFixture({ framework: 'sidekiq' });
    const { json } = await f.post(`/api/queues/${f.queueId()}/pause`);
    await f.ack([{ id: json.commandId, status: 'unsupported', reason: 'pausing queues is Sidekiq Pro/Enterprise' }]);
    expect((await f.get(`/api/queues/${f.queueId()}`)).json).toMatchObject({
      paused: false,
      commands: [{ type: 'queue.pause', status: 'unsupported', reason: 'pausing queues is Sidekiq Pro/Enterprise' }],
    });
  });

  test('clean: the params reach the agent as given; its details come back on the command', async () => {
    const f = await controlFixture();
    const body = { mode: 'finished', olderThanMs: 3_600_000, states: ['completed', 'failed'] };
    const { json } = await f.post(`/api/queues/${f.queueId()}/clean`, body);
    const [command] = await f.commands();
    expect(command).toEqual({ id: json.commandId, type: 'queue.clean', queue: 'emails', params: body, createdAt: iso(T0) });
    await f.ack([{ id: json.commandId, status: 'done', details: { removed: 1204, completed: 1200, failed: 4 } }]);
    expect((await f.get(`/api/commands/${json.commandId}`)).json).toMatchObject({ status: 'done', params: body, details: { removed: 1204, completed: 1200, failed: 4 } });
    const waiting = await f.post(`/api/queues/${f.queueId()}/clean`, { mode: 'waiting' });
    expect((await f.get(`/api/commands/${waiting.json.commandId}`)).json.params).toEqual({ mode: 'waiting' });
  });

  test('clean params are checked: each mode takes its fields, states once each, olderThanMs bounded', async () => {
    const f = await controlFixture();
    const cases: Array<[unknown, string]> = [
      [{ mode: 'finished', states: ['completed'] }, 'olderThanMs'],
      [{ mode: 'finished', olderThanMs: 1000 }, 'states'],
      [{ mode: 'waiting', states: ['completed'] }, 'mode'],
      [{ mode: 'finished', olderThanMs: 1000, states: ['completed', 'completed'] }, 'states'],
      [{ mode: 'finished', olderThanMs: 1000, states: ['active'] }, 'states.0'],
      [{ mode: 'finished', olderThanMs: -1, states: ['completed'] }, 'olderThanMs'],
      [{ mode: 'everything' }, 'mode'],
      [{ mode: 'waiting', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const refused = await f.post(`/api/queues/${f.queueId()}/clean`, body);
      expect({ body, status: refused.status, fields: Object.keys(refused.json.error.details ?? {}) }).toEqual({ body, status: 400, fields: expect.arrayContaining([field]) });
    }
    expect(await f.commands()).toEqual([]);
  });

  test('concurrency: a positive integer or null; anything else is a 400', async () => {
    const f = await controlFixture();
    for (const concurrency of [0, 1.5, '3', 2_000_000]) expect((await f.post(`/api/queues/${f.queueId()}/concurrency`, { concurrency })).status).toBe(400);
    expect((await f.post(`/api/queues/${f.queueId()}/concurrency`, {})).status).toBe(400);
    const set = await f.post(`/api/queues/${f.queueId()}/concurrency`, { concurrency: 3 });
    const cleared = await f.post(`/api/queues/${f.queueId()}/concurrency`, { concurrency: null });
    expect((await f.commands()).map((command) => [command.id, command.params])).toEqual([
      [set.json.commandId, { concurrency: 3 }],
      [cleared.json.commandId, { concurrency: null }],
    ]);
  });

  test('the clean estimate counts what jobwatch knows; a waiting clean, the reported depth', async () => {
    const f = await controlFixture();
    f.t.clock.advance(3_600_000);
    const estimate = (query: string) => f.get(`/api/queues/${f.queueId()}/clean-estimate?${query}`);
    // emails:6 completed and emails:3, emails:7 failed, all finished an hour and 5 s ago
    expect((await estimate('mode=finished&olderThanMs=3600000&states=completed,failed')).json).toEqual({ jobs: 3, atLeast: false, source: 'jobwatch' });
    expect((await estimate('mode=finished&olderThanMs=3600000&states=completed')).json).toEqual({ jobs: 1, atLeast: false, source: 'jobwatch' });
    expect((await estimate('mode=finished&olderThanMs=7200000&states=failed')).json).toEqual({ jobs: 0, atLeast: false, source: 'jobwatch' });
    expect((await estimate('mode=waiting')).json).toEqual({ jobs: 1, atLeast: false, source: 'snapshot' });
    expect((await estimate('mode=finished&olderThanMs=1&states=running')).status).toBe(400);
    expect((await f.get('/api/queues/nope/clean-estimate?mode=waiting')).status).toBe(404);
  });

  test("retry all failed: one command for the queue; Celery's agent gets one retry per failed job instead", async () => {
    const bullmq = await controlFixture();
    const one = await bullmq.post(`/api/queues/${bullmq.queueId()}/retry-failed`);
    expect((await bullmq.get(`/api/commands/${one.json.commandId}`)).json).toMatchObject({ type: 'queue.retry_failed' });
    const celery = await controlFixture({ framework: 'celery' });
    const each = await celery.post(`/api/queues/${celery.queueId()}/retry-failed`);
    expect(each).toEqual({ status: 202, json: { commandId: null, retriesRequested: 2 } });
    expect((await celery.commands()).map((command) => [command.type, command.externalId])).toEqual([
      ['retry', 'emails:3'],
      ['retry', 'emails:7'],
    ]);
    expect((await celery.get(`/api/jobs/${celery.jobId('emails:3')}`)).json).toMatchObject({ state: 'retrying', lastCommand: { type: 'retry', status: 'pending' } });
  });
});

describe('worker and task controls', () => {
  test('quiet and stop name the worker as the job system knows it; pool takes a non-zero delta', async () => {
    const f = await controlFixture({ framework: 'sidekiq' });
    const quiet = await f.post(`/api/workers/${f.workerId()}/quiet`);
    expect(quiet.status).toBe(202);
    expect((await f.get(`/api/commands/${quiet.json.commandId}`)).json.target).toEqual({ kind: 'worker', workerId: 'w1@10.0.0.5:6000', hostname: '10.0.0.5', pid: 4242 });
    await f.post(`/api/workers/${f.workerId()}/stop`);
    expect((await f.post(`/api/workers/${f.workerId()}/pool`, { delta: 0 })).status).toBe(400);
    expect((await f.post(`/api/workers/${f.workerId()}/pool`, { delta: 1001 })).status).toBe(400);
    await f.post(`/api/workers/${f.workerId()}/pool`, { delta: -2 });
    expect((await f.commands()).map(({ id: _id, createdAt: _at, ...command }) => command)).toEqual([
      { type: 'worker.quiet', workerId: 'w1@10.0.0.5:6000', hostname: '10.0.0.5', pid: 4242 },
      { type: 'worker.stop', workerId: 'w1@10.0.0.5:6000', hostname: '10.0.0.5', pid: 4242 },
      { type: 'worker.pool', workerId: 'w1@10.0.0.5:6000', hostname: '10.0.0.5', pid: 4242, params: { delta: -2 } },
    ]);
    await f.ack([{ id: quiet.json.commandId, status: 'done' }]);
    const worker = (await f.get('/api/workers')).json.data[0];
    expect(worker.commands.map((command: { type: string; status: string }) => `${command.type} ${command.status}`)).toEqual(['worker.pool pending', 'worker.stop pending', 'worker.quiet done']);
    expect(worker.controls['worker.stop']).toEqual({ available: false, reason: 'a stop is waiting for the agent' });
    expect((await f.post('/api/workers/nope/quiet')).status).toBe(404);
  });

  test("a worker control the agent does not support is disabled with its reason; an offline worker's are too", async () => {
    const f = await controlFixture();
    await f.report(BULLMQ_CONTROLS);
    const worker = (await f.get('/api/workers')).json.data[0];
    expect(worker.controls['worker.quiet']).toEqual({ available: false, reason: 'BullMQ has no remote control of its workers' });
    await f.report({ ...BULLMQ_CONTROLS, 'worker.quiet': { supported: true } });
    f.t.clock.advance(60_000);
    const offline = (await f.get('/api/workers')).json.data[0];
    expect(offline.controls['worker.quiet']).toEqual({ available: false, reason: 'the worker is offline: there is nothing to ask it' });
  });

  test("a task's rate limit: Celery's syntax or null, for a connection of the user's", async () => {
    const f = await controlFixture({ framework: 'celery' });
    const set = await f.post('/api/tasks/rate-limit', { connectionId: f.c.id, name: 'send', rate: '10/m' });
    expect(set.status).toBe(202);
    expect((await f.get(`/api/commands/${set.json.commandId}`)).json).toMatchObject({ type: 'task.rate_limit', target: { kind: 'task', name: 'send', queue: null }, params: { rate: '10/m' } });
    expect((await f.post('/api/tasks/rate-limit', { connectionId: f.c.id, name: 'send', rate: null })).status).toBe(202);
    for (const rate of ['10/d', 'fast', '1/m; rm -rf', '', '1e3']) expect((await f.post('/api/tasks/rate-limit', { connectionId: f.c.id, name: 'send', rate })).status).toBe(400);
    expect((await f.post('/api/tasks/rate-limit', { connectionId: 'other', name: 'send', rate: '1' })).status).toBe(404);
  });
});

describe('who may, and how much', () => {
  test("another user's queue, worker, job and command are not found; without a session 401", async () => {
    const f = await controlFixture();
    const { json } = await f.post(`/api/queues/${f.queueId()}/pause`);
    const other = await f.t.createUser(f.cookie, 'other@example.com');
    const as = (method: string, path: string) => f.t.request(method, path, { body: method === 'POST' ? {} : undefined, headers: { cookie: other } });
    for (const path of [`/api/queues/${f.queueId()}/resume`, `/api/workers/${f.workerId()}/quiet`, `/api/jobs/${f.jobId('emails:1')}/promote`]) expect((await as('POST', path)).status).toBe(404);
    expect((await as('GET', `/api/commands/${json.commandId}`)).status).toBe(404);
    expect((await as('GET', `/api/queues/${f.queueId()}`)).status).toBe(404);
    expect((await as('GET', '/api/capabilities')).json).toEqual({ data: [] });
    expect((await f.t.request('POST', `/api/queues/${f.queueId()}/pause`, { body: {} })).status).toBe(401);
  });

  test(`past ${CONTROL_COMMANDS_PENDING_MAX} pending controls a connection's next is refused with 429; an answer makes room`, async () => {
    const f = await controlFixture();
    const actor = f.t.engine.connection(f.c.id)!;
    for (let i = 0; i < CONTROL_COMMANDS_PENDING_MAX; i++) f.t.engine.evolve(actor.decideControl({ type: 'queue.pause', queue: 'emails' }, T0));
    const refused = await f.post(`/api/queues/${f.queueId()}/resume`);
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('RATE_LIMITED');
    const [oldest] = actor.commands.oldestFirst(1);
    await f.ack([{ id: oldest!.id, status: 'done' }]);
    expect((await f.post(`/api/queues/${f.queueId()}/resume`)).status).toBe(202);
  });
});

describe('capabilities', () => {
  test('kept per connection and framework; types the service does not know are dropped; a report that says nothing new writes nothing', async () => {
    const f = await controlFixture();
    const first = await f.report({ ...BULLMQ_CONTROLS, 'queue.teleport': { supported: true } });
    expect(first.json).toEqual({ connectionId: f.c.id, framework: 'bullmq', agentVersion: '1.2.0', reportedAt: iso(T0), controls: BULLMQ_CONTROLS });
    const records = f.log.records.length;
    f.t.clock.advance(5_000);
    expect((await f.report(BULLMQ_CONTROLS)).json.reportedAt).toBe(iso(T0));
    expect(f.log.records.length).toBe(records);
    await f.report({ 'queue.pause': { supported: true } }, 'celery');
    expect((await f.get('/api/capabilities')).json.data.map((each: { framework: string }) => each.framework)).toEqual(['bullmq', 'celery']);
    expect((await f.get(`/api/capabilities?connectionId=${f.c.id}`)).json.data).toHaveLength(2);
  });

  test('a queue control its agent cannot do is disabled with the reason; a type the report leaves out, as unknown to that version', async () => {
    const f = await controlFixture({ framework: 'sidekiq' });
    await f.report({ revoke: { supported: true }, 'queue.pause': { supported: false, reason: 'pausing queues is Sidekiq Pro/Enterprise' } });
    const { controls } = (await f.get(`/api/queues/${f.queueId()}`)).json;
    expect(controls['queue.pause']).toEqual({ available: false, reason: 'pausing queues is Sidekiq Pro/Enterprise' });
    expect(controls['queue.clean']).toEqual({ available: false, reason: "this agent version (1.2.0) does not know 'queue.clean'" });
  });

  test('reports are checked: a known framework, a version, reasons for what is not supported', async () => {
    const f = await controlFixture();
    const agent = { authorization: `Bearer ${f.c.apiKey}` };
    const put = (body: unknown) => f.t.request('PUT', '/api/agent/capabilities', { body, headers: agent });
    expect((await put({ framework: 'resque', agentVersion: '1', controls: {} })).status).toBe(400);
    expect((await put({ framework: 'bullmq', agentVersion: '', controls: {} })).status).toBe(400);
    const noReason = await put({ framework: 'bullmq', agentVersion: '1', controls: { 'queue.pause': { supported: false, reason: null } } });
    expect(noReason.json.error.details).toEqual({ 'controls.queue.pause.reason': ['a control that is not supported says why'] });
    // a supported control may say `reason: null`; it is kept as {supported: true}
    expect((await put({ framework: 'bullmq', agentVersion: '1', controls: { 'queue.pause': { supported: true, reason: null } } })).json.controls).toEqual({ 'queue.pause': { supported: true } });
    expect((await put({ framework: 'bullmq', agentVersion: '1', controls: { 'queue.pause': { supported: 'yes' } } })).status).toBe(400);
    expect((await f.t.request('PUT', '/api/agent/capabilities', { body: { framework: 'bullmq', agentVersion: '1', controls: {} }, headers: { cookie: f.cookie } })).status).toBe(401);
  });
});

describe('outcomes', () => {
  test("ack outcomes: unsupported is a status; details are bounded (16 keys, short texts, no objects)", async () => {
    const f = await controlFixture();
    const { json } = await f.post(`/api/queues/${f.queueId()}/pause`);
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i]));
    for (const details of [many, { nested: { a: 1 } }, { text: 'x'.repeat(201) }]) expect((await f.ack([{ id: json.commandId, status: 'done', details }])).status).toBe(400);
    expect((await f.ack([{ id: json.commandId, status: 'skipped' }])).status).toBe(400);
    expect((await f.ack([{ id: json.commandId, status: 'unsupported', reason: 'no' }])).json).toEqual({ acked: 1 });
  });

  test('the live stream carries each command when it is made and when its outcome arrives, and the queue with it', async () => {
    const f = await controlFixture();
    const aborted = new AbortController();
    const response = await f.t.app.handle(new Request(`${BASE}/api/events/stream`, { headers: { cookie: f.cookie }, signal: aborted.signal }));
    const reader = new SseMessageReader(response.body!);
    try {
      const { json } = await f.post(`/api/queues/${f.queueId()}/pause`);
      await f.ack([{ id: json.commandId, status: 'done' }]);
      const events = await reader.nextEvents(3);
      expect(events.map((event) => [event.event, JSON.parse(event.data!).status ?? JSON.parse(event.data!).paused])).toEqual([
        ['command', 'pending'],
        ['queue', true],
        ['command', 'done'],
      ]);
    } finally {
      aborted.abort();
    }
  });

  test('replaying the log and restoring a snapshot give the same commands, outcomes, capabilities and paused queues', async () => {
    const f = await controlFixture({ commandConfirmMs: 60_000 });
    await f.report(BULLMQ_CONTROLS);
    const pause = await f.post(`/api/queues/${f.queueId()}/pause`);
    const clean = await f.post(`/api/queues/${f.queueId()}/clean`, { mode: 'waiting' });
    await f.post(`/api/workers/${f.workerId()}/quiet`);
    await f.post(`/api/jobs/${f.jobId('emails:1')}/promote`);
    await f.ack([
      { id: pause.json.commandId, status: 'done' },
      { id: clean.json.commandId, status: 'done', details: { removed: 1 } },
    ]);
    f.t.clock.advance(61_000);
    const live = f.t.engine.connection(f.c.id)!;
    await f.t.engine.commit(live.decideCommandExpiry(f.t.clock.nowMs())!);
    const nowMs = f.t.clock.nowMs();
    for (const engine of replayedAndRestored(f.t.engine, f.log.records)) {
      const actor = engine.connection(f.c.id)!;
      expect(actor.controlOutcomes.toSnapshot()).toEqual(live.controlOutcomes.toSnapshot());
      expect(actor.commandOutcomes.toSnapshot()).toEqual(live.commandOutcomes.toSnapshot());
      expect(actor.capabilities.toSnapshot()).toEqual(live.capabilities.toSnapshot());
      expect(actor.commands.toSnapshot()).toEqual(live.commands.toSnapshot());
      expect(toQueueStreamItem(actor.queues.get('emails')!, actor, nowMs)).toEqual(toQueueStreamItem(live.queues.get('emails')!, live, nowMs));
      expect(toWorkerView(actor.workers.get('w1@10.0.0.5:6000')!, actor, nowMs)).toEqual(toWorkerView(live.workers.get('w1@10.0.0.5:6000')!, live, nowMs));
    }
    expect(live.controlOutcomes.toSnapshot().map((outcome) => `${outcome.command.type} ${outcome.status}`)).toEqual(['queue.pause done', 'queue.clean done', 'worker.quiet expired']);
  });
});
