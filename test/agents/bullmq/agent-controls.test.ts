/**
 * Every control of the BullMQ agent through the real job system: a real redis-server, a
 * BullMQ app (worker and producer processes), jobwatch and `jobwatch-bullmq`. Each control
 * is asked through jobwatch's API as the dashboard asks it, and checked twice: in BullMQ
 * itself (Redis, or the app's worker running or not running the jobs) and in what jobwatch
 * shows (the command's outcome, the job's or queue's state). The tests share one set of
 * processes and run in order.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { getJson } from '../../blackbox/service-process.ts';
import { eventually, jobDetail, listedJobs, produce, startStack, type Stack } from './harness.ts';

const TEST_MS = 90_000;
const NO_REMOTE_CONTROL = 'BullMQ has no remote control of its workers';
let stack: Stack;

const agentLog = () => stack.agent.output;
const redis = (...args: string[]) => stack.redis.cli(...args);
const api = (path: string) => getJson(stack.service.baseUrl, path, stack.cookie);

/** Asks a control as the dashboard does (JSON, the session cookie); returns the answer. */
async function ask(path: string, body: unknown = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.service.baseUrl}${path}`, { method: 'POST', headers: { cookie: stack.cookie, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** The command once the agent answered it (GET /api/commands/{id}). */
async function outcomeOf(commandId: string): Promise<any> {
  return eventually(
    `the agent's outcome of command ${commandId}`,
    async () => {
      const { body } = await api(`/api/commands/${commandId}`);
      return body.status !== 'pending' && body;
    },
    30_000,
    agentLog,
  );
}

/** Asks a control that answers 202 and waits for its outcome. */
async function control(path: string, body: unknown = {}): Promise<any> {
  const answer = await ask(path, body);
  expect(answer.status).toBe(202);
  return outcomeOf(answer.body.commandId);
}

/** The job's detail once jobwatch has it in `state` (any state when none is named). */
async function jobIn(externalId: string, state?: string): Promise<any> {
  return eventually(
    `job ${externalId} in jobwatch${state ? ` as ${state}` : ''}`,
    async () => {
      const detail = await jobDetail(stack.service.baseUrl, stack.cookie, externalId);
      return detail && (state === undefined || detail.state === state) && detail;
    },
    30_000,
    agentLog,
  );
}

async function queueNamed(name: string): Promise<any> {
  return eventually(`queue ${name} in jobwatch`, async () => (await api('/api/queues?limit=100')).body.data.find((queue: any) => queue.name === name), 20_000, agentLog);
}

const notes = (job: any): string[] => job.stateHistory.flatMap((entry: any) => (entry.note === undefined ? [] : [entry.note]));

beforeAll(async () => {
  stack = await startStack('controls', { QUEUES: 'ctl,gone', WORKER_NAME: 'w1', CONCURRENCY: '4' }, (redisUrl) =>
    produce(redisUrl, [{ queue: 'gone', name: 'doomed', opts: { delay: 600_000 } }]),
  );
  await stack.agent.waitFor(/told jobwatch what this agent can do/, 30_000);
}, TEST_MS);

afterAll(async () => {
  await stack?.stop();
});

describe('the BullMQ agent carries out every control, or says why not', () => {
  test('it reports what it supports at its start: every job and queue control; worker controls and task rate limits unsupported, with the reason', async () => {
    const { body } = await api('/api/capabilities');
    expect(body.data).toHaveLength(1);
    const [report] = body.data;
    expect(report).toMatchObject({ connectionId: stack.connection.id, framework: 'bullmq', agentVersion: '0.2.0' });
    for (const type of ['revoke', 'retry', 'promote', 'delete', 'kill', 'queue.pause', 'queue.resume', 'queue.clean', 'queue.retry_failed', 'queue.concurrency']) {
      expect({ type, support: report.controls[type] }).toEqual({ type, support: { supported: true } });
    }
    for (const type of ['worker.quiet', 'worker.stop', 'worker.pool']) expect(report.controls[type].reason).toContain(NO_REMOTE_CONTROL);
    expect(report.controls['task.rate_limit']).toEqual({ supported: false, reason: expect.stringContaining('per queue') });
  }, TEST_MS);

  test('pause is seen by BullMQ: a job added while paused waits; resumed, it runs; jobwatch shows the queue paused, then not', async () => {
    const queue = await queueNamed('ctl');
    const paused = await control(`/api/queues/${queue.id}/pause`);
    expect(paused).toMatchObject({ status: 'done', details: { paused: true, alreadyPaused: false } });
    expect(await redis('HGET', 'bull:ctl:meta', 'paused')).toBe('1');
    expect((await api(`/api/queues/${queue.id}`)).body.paused).toBe(true);
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'while-paused', data: {} }]);
    await jobIn(`ctl:${id}`, 'queued');
    await Bun.sleep(1_500); // the app's worker is running: it would have taken the job by now
    expect(await redis('LRANGE', 'bull:ctl:wait', '0', '-1')).toBe(id!);
    expect((await jobIn(`ctl:${id}`)).state).toBe('queued');
    expect(await control(`/api/queues/${queue.id}/resume`)).toMatchObject({ status: 'done', details: { paused: false, wasPaused: true } });
    await jobIn(`ctl:${id}`, 'completed');
    await eventually('the queue shown not paused', async () => (await api(`/api/queues/${queue.id}`)).body.paused === false, 20_000, agentLog);
  }, TEST_MS);

  test('clean of finished jobs: BullMQ removes what finished before the cutoff, counted; jobwatch keeps their history', async () => {
    const queue = await queueNamed('ctl');
    const ids = await produce(stack.redis.url, [1, 2, 3].map((n) => ({ queue: 'ctl', name: `done-${n}`, data: {} })));
    for (const id of ids) await jobIn(`ctl:${id}`, 'completed');
    const completedInRedis = Number(await redis('ZCARD', 'bull:ctl:completed'));
    expect(completedInRedis).toBeGreaterThanOrEqual(4); // these three and the job run after the resume
    const estimate = (await api(`/api/queues/${queue.id}/clean-estimate?mode=finished&olderThanMs=0&states=completed`)).body;
    expect(estimate).toEqual({ jobs: completedInRedis, atLeast: false, source: 'jobwatch' });
    const cleaned = await control(`/api/queues/${queue.id}/clean`, { mode: 'finished', olderThanMs: 0, states: ['completed'] });
    expect(cleaned).toMatchObject({ status: 'done', details: { removed: completedInRedis, completed: completedInRedis } });
    expect(await redis('ZCARD', 'bull:ctl:completed')).toBe('0');
    expect(await redis('EXISTS', `bull:ctl:${ids[0]}`)).toBe('0');
    expect((await jobIn(`ctl:${ids[0]}`)).state).toBe('completed');
  }, TEST_MS);

  test('clean of waiting jobs: BullMQ removes every waiting job with its own remove, so jobwatch shows them cancelled', async () => {
    const queue = await queueNamed('ctl');
    await control(`/api/queues/${queue.id}/pause`);
    const ids = await produce(stack.redis.url, [
      { queue: 'ctl', name: 'wait-1', data: {} },
      { queue: 'ctl', name: 'wait-2', data: {} },
      { queue: 'ctl', name: 'wait-3', data: {}, opts: { priority: 5 } },
    ]);
    for (const id of ids) await jobIn(`ctl:${id}`, 'queued');
    const cleaned = await control(`/api/queues/${queue.id}/clean`, { mode: 'waiting' });
    expect(cleaned).toMatchObject({ status: 'done', details: { removed: 3, left: 0 } });
    expect(await redis('LLEN', 'bull:ctl:wait')).toBe('0');
    expect(await redis('ZCARD', 'bull:ctl:prioritized')).toBe('0');
    for (const id of ids) expect((await jobIn(`ctl:${id}`, 'cancelled')).extensions.removedFrom).toBeDefined();
    await control(`/api/queues/${queue.id}/resume`);
  }, TEST_MS);

  test('run now (promote): a job delayed by ten minutes runs at once', async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'later', data: {}, opts: { delay: 600_000 } }]);
    const scheduled = await jobIn(`ctl:${id}`, 'scheduled');
    expect(scheduled.actions.promote).toEqual({ available: true, reason: null });
    const answer = await ask(`/api/jobs/${scheduled.id}/promote`);
    expect(answer.status).toBe(202);
    expect(await outcomeOf(answer.body.commandId)).toMatchObject({ status: 'done' });
    const completed = await jobIn(`ctl:${id}`, 'completed');
    expect(notes(completed)).toEqual(['run now requested', 'run now done']);
  }, TEST_MS);

  test('retry now: a job waiting a minute for its backoff runs its next attempt at once', async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'flaky', data: { failAttempts: 1 }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } } }]);
    const retrying = await jobIn(`ctl:${id}`, 'retrying');
    expect(retrying.actions.retry).toEqual({ available: true, reason: null });
    expect(Number(await redis('ZCARD', 'bull:ctl:delayed'))).toBeGreaterThanOrEqual(1);
    const answer = await ask(`/api/jobs/${retrying.id}/retry`);
    expect(answer).toEqual({ status: 200, body: { id: retrying.id, success: true, state: 'retrying' } });
    const completed = await jobIn(`ctl:${id}`, 'completed');
    expect(completed).toMatchObject({ attempt: 2, lastCommand: { type: 'retry', status: 'done' } });
  }, TEST_MS);

  test('kill: a job waiting to retry is failed for good in BullMQ (out of its delayed set, into its failed set), with its last error', async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'hopeless', data: { failAttempts: 9 }, opts: { attempts: 5, backoff: { type: 'fixed', delay: 60_000 } } }]);
    const retrying = await jobIn(`ctl:${id}`, 'retrying');
    const answer = await ask(`/api/jobs/${retrying.id}/kill`);
    expect(answer.status).toBe(202);
    expect(await outcomeOf(answer.body.commandId)).toMatchObject({ status: 'done' });
    expect(await redis('ZSCORE', 'bull:ctl:delayed', id!)).toBe('');
    expect(await redis('ZSCORE', 'bull:ctl:failed', id!)).not.toBe('');
    const failed = await jobIn(`ctl:${id}`, 'failed');
    expect(failed).toMatchObject({ error: 'planned failure 1', lastCommand: { type: 'kill', status: 'done' } });
    expect(Number(await redis('HGET', `bull:ctl:${id}`, 'finishedOn'))).toBeGreaterThan(0);
  }, TEST_MS);

  test("retry all failed: BullMQ's retryJobs moves every failed job back to waiting; they run again", async () => {
    const queue = await queueNamed('ctl');
    const ids = await produce(stack.redis.url, [1, 2].map((n) => ({ queue: 'ctl', name: `once-${n}`, data: { failAttempts: 1 } })));
    for (const id of ids) await jobIn(`ctl:${id}`, 'failed');
    const failedInRedis = Number(await redis('ZCARD', 'bull:ctl:failed')); // these two and the killed job
    const retried = await control(`/api/queues/${queue.id}/retry-failed`);
    expect(retried).toMatchObject({ status: 'done', details: { retried: failedInRedis } });
    for (const id of ids) await jobIn(`ctl:${id}`, 'completed');
  }, TEST_MS);

  test('delete: a failed job is removed from BullMQ and kept in jobwatch; a delayed one is removed and shown cancelled', async () => {
    const [failedId, delayedId] = await produce(stack.redis.url, [
      { queue: 'ctl', name: 'to-delete', data: { failAttempts: 1 } },
      { queue: 'ctl', name: 'to-delete-later', data: {}, opts: { delay: 600_000 } },
    ]);
    const failed = await jobIn(`ctl:${failedId}`, 'failed');
    const deleted = await ask(`/api/jobs/${failed.id}/delete`);
    expect(await outcomeOf(deleted.body.commandId)).toMatchObject({ status: 'done' });
    expect(await redis('EXISTS', `bull:ctl:${failedId}`)).toBe('0');
    expect(notes(await jobIn(`ctl:${failedId}`, 'failed'))).toEqual(['delete requested', 'delete done']);
    const delayed = await jobIn(`ctl:${delayedId}`, 'scheduled');
    expect(await outcomeOf((await ask(`/api/jobs/${delayed.id}/delete`)).body.commandId)).toMatchObject({ status: 'done' });
    await jobIn(`ctl:${delayedId}`, 'cancelled');
  }, TEST_MS);

  test('concurrency: BullMQ keeps the global concurrency asked, and clears it', async () => {
    const queue = await queueNamed('ctl');
    expect(await control(`/api/queues/${queue.id}/concurrency`, { concurrency: 2 })).toMatchObject({ status: 'done', details: { concurrency: 2 } });
    expect(await redis('HGET', 'bull:ctl:meta', 'concurrency')).toBe('2');
    expect(await control(`/api/queues/${queue.id}/concurrency`, { concurrency: null })).toMatchObject({ status: 'done', details: { concurrency: null } });
    expect(await redis('HEXISTS', 'bull:ctl:meta', 'concurrency')).toBe('0');
  }, TEST_MS);

  test('worker controls are disabled with the reason; asked anyway, the agent answers unsupported with it', async () => {
    const worker = await eventually('the worker listed', async () => (await api('/api/workers')).body.data.find((each: any) => each.queues.includes('ctl')), 20_000, agentLog);
    expect(worker.controls['worker.quiet']).toEqual({ available: false, reason: expect.stringContaining(NO_REMOTE_CONTROL) });
    for (const kind of ['quiet', 'stop']) expect(await control(`/api/workers/${worker.id}/${kind}`)).toMatchObject({ status: 'unsupported', reason: expect.stringContaining(NO_REMOTE_CONTROL) });
  }, TEST_MS);

  test('a command for a job or a queue BullMQ no longer has comes back "failed: not found"; nothing is done', async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'gone-after', data: {}, opts: { removeOnComplete: true } }]);
    const completed = await jobIn(`ctl:${id}`, 'completed');
    const gone = await outcomeOf((await ask(`/api/jobs/${completed.id}/delete`)).body.commandId);
    expect(gone).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^not found: BullMQ no longer has job/) });
    const queue = await queueNamed('gone');
    const keys = (await redis('--scan', '--pattern', 'bull:gone:*')).split('\n').filter(Boolean);
    expect(keys.length).toBeGreaterThan(0);
    await redis('DEL', ...keys);
    const paused = await control(`/api/queues/${queue.id}/pause`);
    expect(paused).toMatchObject({ status: 'failed', reason: 'not found: BullMQ has no queue "gone" under prefix bull (it was removed)' });
    expect(await redis('EXISTS', 'bull:gone:meta')).toBe('0');
    expect((await listedJobs(stack.service.baseUrl, stack.cookie)).size).toBeGreaterThan(0);
  }, TEST_MS);
});
