/**
 * Every control of the BullMQ agent through the real job system: a real redis-server, a
 * BullMQ app (worker and producer processes), jobwatch and `jobwatch-bullmq`. Each control
 * is asked through jobwatch's API as the dashboard asks it, and checked twice: in BullMQ
 * itself (Redis, or the app's worker running or not running the jobs) and in what jobwatch
 * shows (the command's outcome, the job's or queue's state). The tests share one set of
 * processes and run in order.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFields } from './support/fields.js';
import { getJson, jobDetail, listedJobs } from './support/jobwatch.js';
import { produce, startStack } from './support/stack.js';
import { eventually, sleep } from './support/wait.js';

const TEST_MS = 90_000;
const NO_REMOTE_CONTROL = /BullMQ has no remote control of its workers/;
let stack;

const agentLog = () => stack.agent.output;
const redis = (...args) => stack.redis.cli(...args);
const api = (path) => getJson(stack.service.baseUrl, path, stack.cookie);

/** Asks a control as the dashboard does (JSON, the session cookie); returns the answer. */
async function ask(path, body = {}) {
  const response = await fetch(`${stack.service.baseUrl}${path}`, { method: 'POST', headers: { cookie: stack.cookie, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/** The command once the agent answered it (GET /api/commands/{id}). */
async function outcomeOf(commandId) {
  return eventually(
    `the agent's outcome of command ${commandId}`,
    async () => {
      const { body } = await api(`/api/commands/${commandId}`);
      return body.status !== 'pending' && body;
    },
    30_000,
    agentLog
  );
}

/** Asks a control that answers 202 and waits for its outcome. */
async function control(path, body = {}) {
  const answer = await ask(path, body);
  assert.equal(answer.status, 202);
  return outcomeOf(answer.body.commandId);
}

/** The job's detail once jobwatch has it in `state` (any state when none is named). */
async function jobIn(externalId, state) {
  return eventually(
    `job ${externalId} in jobwatch${state ? ` as ${state}` : ''}`,
    async () => {
      const detail = await jobDetail(stack.service.baseUrl, stack.cookie, externalId);
      return detail && (state === undefined || detail.state === state) && detail;
    },
    30_000,
    agentLog
  );
}

async function queueNamed(name) {
  return eventually(`queue ${name} in jobwatch`, async () => (await api('/api/queues?limit=100')).body.data.find((queue) => queue.name === name), 20_000, agentLog);
}

const notes = (job) => job.stateHistory.flatMap((entry) => entry.note === undefined ? [] : [entry.note]);

before(async () => {
  stack = await startStack('controls', { QUEUES: 'ctl,gone', WORKER_NAME: 'w1', CONCURRENCY: '4' }, (redisUrl) =>
  produce(redisUrl, [{ queue: 'gone', name: 'doomed', opts: { delay: 600_000 } }])
  );
  await stack.agent.waitFor(/told jobwatch what this agent can do/, 30_000);
}, { timeout: TEST_MS });

after(async () => {
  await stack?.stop();
});

describe('the BullMQ agent carries out every control, or says why not', () => {
  test('it reports what it supports at its start: every job and queue control; worker controls and task rate limits unsupported, with the reason', { timeout: TEST_MS }, async () => {
    const { body } = await api('/api/capabilities');
    assert.equal(body.data.length, 1);
    const [report] = body.data;
    assertFields(report, { connectionId: stack.connection.id, framework: 'bullmq', agentVersion: '0.2.0' });
    for (const type of ['revoke', 'retry', 'promote', 'delete', 'kill', 'queue.pause', 'queue.resume', 'queue.clean', 'queue.retry_failed', 'queue.concurrency']) {
      assert.deepEqual({ type, support: report.controls[type] }, { type, support: { supported: true } });
    }
    for (const type of ['worker.quiet', 'worker.stop', 'worker.pool']) assert.match(report.controls[type].reason, NO_REMOTE_CONTROL);
    assertFields(report.controls['task.rate_limit'], { supported: false, reason: /per queue/ });
  });

  test('pause is seen by BullMQ: a job added while paused waits; resumed, it runs; jobwatch shows the queue paused, then not', { timeout: TEST_MS }, async () => {
    const queue = await queueNamed('ctl');
    const paused = await control(`/api/queues/${queue.id}/pause`);
    assertFields(paused, { status: 'done', details: { paused: true, alreadyPaused: false } });
    assert.equal(await redis('HGET', 'bull:ctl:meta', 'paused'), '1');
    assert.equal((await api(`/api/queues/${queue.id}`)).body.paused, true);
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'while-paused', data: {} }]);
    await jobIn(`ctl:${id}`, 'queued');
    await sleep(1_500); // the app's worker is running: it would have taken the job by now
    assert.equal(await redis('LRANGE', 'bull:ctl:wait', '0', '-1'), id);
    assert.equal((await jobIn(`ctl:${id}`)).state, 'queued');
    assertFields(await control(`/api/queues/${queue.id}/resume`), { status: 'done', details: { paused: false, wasPaused: true } });
    await jobIn(`ctl:${id}`, 'completed');
    await eventually('the queue shown not paused', async () => (await api(`/api/queues/${queue.id}`)).body.paused === false, 20_000, agentLog);
  });

  test('clean of finished jobs: BullMQ removes what finished before the cutoff, counted; jobwatch keeps their history', { timeout: TEST_MS }, async () => {
    const queue = await queueNamed('ctl');
    const ids = await produce(stack.redis.url, [1, 2, 3].map((n) => ({ queue: 'ctl', name: `done-${n}`, data: {} })));
    for (const id of ids) await jobIn(`ctl:${id}`, 'completed');
    const completedInRedis = Number(await redis('ZCARD', 'bull:ctl:completed'));
    assert.ok(completedInRedis >= 4); // these three and the job run after the resume
    const estimate = (await api(`/api/queues/${queue.id}/clean-estimate?mode=finished&olderThanMs=0&states=completed`)).body;
    assert.deepEqual(estimate, { jobs: completedInRedis, atLeast: false, source: 'jobwatch' });
    const cleaned = await control(`/api/queues/${queue.id}/clean`, { mode: 'finished', olderThanMs: 0, states: ['completed'] });
    assertFields(cleaned, { status: 'done', details: { removed: completedInRedis, completed: completedInRedis } });
    assert.equal(await redis('ZCARD', 'bull:ctl:completed'), '0');
    assert.equal(await redis('EXISTS', `bull:ctl:${ids[0]}`), '0');
    assert.equal((await jobIn(`ctl:${ids[0]}`)).state, 'completed');
  });

  test('clean of waiting jobs: BullMQ removes every waiting job with its own remove, so jobwatch shows them cancelled', { timeout: TEST_MS }, async () => {
    const queue = await queueNamed('ctl');
    await control(`/api/queues/${queue.id}/pause`);
    const ids = await produce(stack.redis.url, [
    { queue: 'ctl', name: 'wait-1', data: {} },
    { queue: 'ctl', name: 'wait-2', data: {} },
    { queue: 'ctl', name: 'wait-3', data: {}, opts: { priority: 5 } }]
    );
    for (const id of ids) await jobIn(`ctl:${id}`, 'queued');
    const cleaned = await control(`/api/queues/${queue.id}/clean`, { mode: 'waiting' });
    assertFields(cleaned, { status: 'done', details: { removed: 3, left: 0 } });
    assert.equal(await redis('LLEN', 'bull:ctl:wait'), '0');
    assert.equal(await redis('ZCARD', 'bull:ctl:prioritized'), '0');
    for (const id of ids) assert.notEqual((await jobIn(`ctl:${id}`, 'cancelled')).extensions.removedFrom, undefined);
    await control(`/api/queues/${queue.id}/resume`);
  });

  test('run now (promote): a job delayed by ten minutes runs at once', { timeout: TEST_MS }, async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'later', data: {}, opts: { delay: 600_000 } }]);
    const scheduled = await jobIn(`ctl:${id}`, 'scheduled');
    assert.deepEqual(scheduled.actions.promote, { available: true, reason: null });
    const answer = await ask(`/api/jobs/${scheduled.id}/promote`);
    assert.equal(answer.status, 202);
    assertFields(await outcomeOf(answer.body.commandId), { status: 'done' });
    const completed = await jobIn(`ctl:${id}`, 'completed');
    assert.deepEqual(notes(completed), ['run now requested', 'run now done']);
  });

  test('retry now: a job waiting a minute for its backoff runs its next attempt at once', { timeout: TEST_MS }, async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'flaky', data: { failAttempts: 1 }, opts: { attempts: 2, backoff: { type: 'fixed', delay: 60_000 } } }]);
    const retrying = await jobIn(`ctl:${id}`, 'retrying');
    assert.deepEqual(retrying.actions.retry, { available: true, reason: null });
    assert.ok(Number(await redis('ZCARD', 'bull:ctl:delayed')) >= 1);
    const answer = await ask(`/api/jobs/${retrying.id}/retry`);
    assert.deepEqual(answer, { status: 200, body: { id: retrying.id, success: true, state: 'retrying' } });
    const completed = await jobIn(`ctl:${id}`, 'completed');
    assertFields(completed, { attempt: 2, lastCommand: { type: 'retry', status: 'done' } });
  });

  test('kill: a job waiting to retry is failed for good in BullMQ (out of its delayed set, into its failed set), with its last error', { timeout: TEST_MS }, async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'hopeless', data: { failAttempts: 9 }, opts: { attempts: 5, backoff: { type: 'fixed', delay: 60_000 } } }]);
    const retrying = await jobIn(`ctl:${id}`, 'retrying');
    const answer = await ask(`/api/jobs/${retrying.id}/kill`);
    assert.equal(answer.status, 202);
    assertFields(await outcomeOf(answer.body.commandId), { status: 'done' });
    assert.equal(await redis('ZSCORE', 'bull:ctl:delayed', id), '');
    assert.notEqual(await redis('ZSCORE', 'bull:ctl:failed', id), '');
    const failed = await jobIn(`ctl:${id}`, 'failed');
    assertFields(failed, { error: 'planned failure 1', lastCommand: { type: 'kill', status: 'done' } });
    assert.ok(Number(await redis('HGET', `bull:ctl:${id}`, 'finishedOn')) > 0);
  });

  test("retry all failed: BullMQ's retryJobs moves every failed job back to waiting; they run again", { timeout: TEST_MS }, async () => {
    const queue = await queueNamed('ctl');
    const ids = await produce(stack.redis.url, [1, 2].map((n) => ({ queue: 'ctl', name: `once-${n}`, data: { failAttempts: 1 } })));
    for (const id of ids) await jobIn(`ctl:${id}`, 'failed');
    const failedInRedis = Number(await redis('ZCARD', 'bull:ctl:failed')); // these two and the killed job
    const retried = await control(`/api/queues/${queue.id}/retry-failed`);
    assertFields(retried, { status: 'done', details: { retried: failedInRedis } });
    for (const id of ids) await jobIn(`ctl:${id}`, 'completed');
  });

  test('delete: a failed job is removed from BullMQ and kept in jobwatch; a delayed one is removed and shown cancelled', { timeout: TEST_MS }, async () => {
    const [failedId, delayedId] = await produce(stack.redis.url, [
    { queue: 'ctl', name: 'to-delete', data: { failAttempts: 1 } },
    { queue: 'ctl', name: 'to-delete-later', data: {}, opts: { delay: 600_000 } }]
    );
    const failed = await jobIn(`ctl:${failedId}`, 'failed');
    const deleted = await ask(`/api/jobs/${failed.id}/delete`);
    assertFields(await outcomeOf(deleted.body.commandId), { status: 'done' });
    assert.equal(await redis('EXISTS', `bull:ctl:${failedId}`), '0');
    assert.deepEqual(notes(await jobIn(`ctl:${failedId}`, 'failed')), ['delete requested', 'delete done']);
    const delayed = await jobIn(`ctl:${delayedId}`, 'scheduled');
    assertFields(await outcomeOf((await ask(`/api/jobs/${delayed.id}/delete`)).body.commandId), { status: 'done' });
    await jobIn(`ctl:${delayedId}`, 'cancelled');
  });

  test('concurrency: BullMQ keeps the global concurrency asked, and clears it', { timeout: TEST_MS }, async () => {
    const queue = await queueNamed('ctl');
    assertFields(await control(`/api/queues/${queue.id}/concurrency`, { concurrency: 2 }), { status: 'done', details: { concurrency: 2 } });
    assert.equal(await redis('HGET', 'bull:ctl:meta', 'concurrency'), '2');
    assertFields(await control(`/api/queues/${queue.id}/concurrency`, { concurrency: null }), { status: 'done', details: { concurrency: null } });
    assert.equal(await redis('HEXISTS', 'bull:ctl:meta', 'concurrency'), '0');
  });

  test('worker controls are disabled with the reason; asked anyway, the agent answers unsupported with it', { timeout: TEST_MS }, async () => {
    const worker = await eventually('the worker listed', async () => (await api('/api/workers')).body.data.find((each) => each.queues.includes('ctl')), 20_000, agentLog);
    assertFields(worker.controls['worker.quiet'], { available: false, reason: NO_REMOTE_CONTROL });
    for (const kind of ['quiet', 'stop']) assertFields(await control(`/api/workers/${worker.id}/${kind}`), { status: 'unsupported', reason: NO_REMOTE_CONTROL });
  });

  test('a command for a job or a queue BullMQ no longer has comes back "failed: not found"; nothing is done', { timeout: TEST_MS }, async () => {
    const [id] = await produce(stack.redis.url, [{ queue: 'ctl', name: 'gone-after', data: {}, opts: { removeOnComplete: true } }]);
    const completed = await jobIn(`ctl:${id}`, 'completed');
    const gone = await outcomeOf((await ask(`/api/jobs/${completed.id}/delete`)).body.commandId);
    assertFields(gone, { status: 'failed', reason: /^not found: BullMQ no longer has job/ });
    const queue = await queueNamed('gone');
    const keys = (await redis('--scan', '--pattern', 'bull:gone:*')).split('\n').filter(Boolean);
    assert.ok(keys.length > 0);
    await redis('DEL', ...keys);
    const paused = await control(`/api/queues/${queue.id}/pause`);
    assertFields(paused, { status: 'failed', reason: 'not found: BullMQ has no queue "gone" under prefix bull (it was removed)' });
    assert.equal(await redis('EXISTS', 'bull:gone:meta'), '0');
    assert.ok((await listedJobs(stack.service.baseUrl, stack.cookie)).size > 0);
  });
});
